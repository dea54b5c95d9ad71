"""The papers' experiments: code that only one study uses. Nothing below the studies imports them;
the CLI, the run plan, the figures and the reports may."""
