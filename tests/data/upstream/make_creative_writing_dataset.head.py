writing_prompts = [
    "Write about a dream you had.",
    "Create and write about a new character.",
    "Write about a place you'd love to visit.",
    "Write about an important life event.",
]
