//! What kind of workload a process is, from its name and command: an inference server (a
//! long-lived process answering requests, whose GPU waits on its clients) or a notebook kernel
//! (whose GPU waits on the person running cells). The rules word their verdicts and advice by
//! it and leave alone what is normal for it (a server idle between requests has not finished).

use gpumeter_model::{ProcessReading, Snapshot};

/// Commands of the long-lived servers that answer requests (their GPUs wait on clients), in
/// lower case with `_` for `-`: TGI's shard runs as `text-generation-server` (its console
/// script) or `text_generation_server` (the module), and both must match. The model servers
/// first, then the Python web servers a hand-written model API runs under (FastAPI under
/// uvicorn, Flask under gunicorn), whose GPU waits on requests just the same.
const SERVERS: [&str; 14] = [
    "tritonserver",
    "vllm",
    "text_generation_launcher",
    "text_generation_server",
    "text_embeddings_router",
    "sglang",
    "ray::servereplica",
    "torchserve",
    "lmdeploy",
    "bentoml",
    "mlserver",
    "uvicorn",
    "gunicorn",
    "hypercorn",
];

/// "tritonserver (pid 4100)" when the job's main process (`main`) is an inference server.
pub(crate) fn inference_server(snap: &Snapshot, main: u32) -> Option<String> {
    let p = snap.processes.iter().find(|p| p.pid == main)?;
    is_server(p).then(|| crate::engine::rules::label::process_label(p))
}

/// Whether a process is an inference server, by its name or command.
pub(crate) fn is_server(p: &ProcessReading) -> bool {
    let text = format!(
        "{} {}",
        p.name.as_deref().unwrap_or(""),
        p.command.as_deref().unwrap_or("")
    )
    .to_lowercase()
    .replace('-', "_");
    SERVERS.iter().any(|s| text.contains(s))
}

/// Commands of a notebook's kernel (Jupyter's, VS Code's and Colab's run ipykernel).
const NOTEBOOKS: [&str; 3] = ["ipykernel", "jupyter", "colab_kernel"];

/// "python (pid 4100)" when the job's main process is a notebook kernel: its GPU waits on the
/// person running cells as much as on any pipeline.
pub(crate) fn notebook(snap: &Snapshot, main: u32) -> Option<String> {
    let p = snap.processes.iter().find(|p| p.pid == main)?;
    let text = p
        .command
        .as_deref()
        .unwrap_or("")
        .to_lowercase()
        .replace('-', "_");
    NOTEBOOKS
        .iter()
        .any(|s| text.contains(s))
        .then(|| crate::engine::rules::label::process_label(p))
}
