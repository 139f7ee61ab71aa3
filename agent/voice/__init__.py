"""The voice: the model (in its own process), the prompt, the chat service, the turn log."""
