"""The Mamba-2 (SSD) block shared by every Sonare model."""
