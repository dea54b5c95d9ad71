"""Test helpers shipped with the package: a tiny random LM and a fake of vLLM's offline interface."""
