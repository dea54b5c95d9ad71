"""Le Bronnec et al. (2024)'s studies other than pr-scale (``webtext``, ``biographies``,
``creative``, ``chat-vs-base``, ``agnews-experiment``) and OmniInput's ``omniinput-compare``:
each study's numbers beside the paper's (``side_by_side``)."""
