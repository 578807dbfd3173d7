"""The Mamba-2 (SSD) block shared by every Sonare model."""

from sonare.ssm.mamba2 import Mamba2, Mamba2Config, RMSNorm
from sonare.ssm.stack import SSMBlock, SSMStack, use_int8_projections
from sonare.ssm.state import BatchState, zeros_state

__all__ = [
    "BatchState",
    "Mamba2",
    "Mamba2Config",
    "RMSNorm",
    "SSMBlock",
    "SSMStack",
    "use_int8_projections",
    "zeros_state",
]
