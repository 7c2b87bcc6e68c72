//! GPU readings through NVML (nvml-wrapper).
