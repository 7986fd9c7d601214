"""What the agent offers and runs: the catalogue, the runner, attachments, notices."""
