//! This machine: NVML for the GPUs plus /proc for the host and the processes feeding the GPUs.
