//! One question to the kubelet: `List` and `GetAllocatableResources` over its unix socket, the
//! whole exchange bounded by one timeout (connect, both calls), no retry — the next refresh is
//! the retry. Answers become a [`PodTable`]; a missing socket, a refusal, a slow or garbled
//! answer become an [`AskError`] saying which.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use tokio::net::UnixStream;
use tonic::transport::{Endpoint, Uri};

use super::proto::pod_resources_lister_client::PodResourcesListerClient;
use super::proto::{AllocatableResourcesRequest, ListPodResourcesRequest};
use super::table::PodTable;

/// Why the kubelet gave no table this time.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AskError {
    /// No socket at the path: not a Kubernetes node, or its directory is not mounted.
    #[error("no pod-resources socket at {0}")]
    Missing(PathBuf),
    /// It did not answer within the bound.
    #[error("the kubelet's pod-resources socket did not answer within {0:?}")]
    Slow(Duration),
    /// The connection or the call failed, or the answer was not pod-resources v1.
    #[error("pod-resources: {0}")]
    Failed(String),
}

/// Asks the kubelet at `socket` what each container was given, within `timeout`.
pub async fn ask(socket: &Path, timeout: Duration) -> Result<PodTable, AskError> {
    if !socket.exists() {
        return Err(AskError::Missing(socket.to_path_buf()));
    }
    match tokio::time::timeout(timeout, exchange(socket.to_path_buf())).await {
        Ok(result) => result,
        Err(_) => Err(AskError::Slow(timeout)),
    }
}

/// Asks from a thread without a runtime (the refresher's): a one-thread runtime for the call.
pub fn ask_blocking(socket: &Path, timeout: Duration) -> Result<PodTable, AskError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| AskError::Failed(format!("could not start the gRPC runtime: {e}")))?;
    runtime.block_on(ask(socket, timeout))
}

async fn exchange(socket: PathBuf) -> Result<PodTable, AskError> {
    // The URI is a placeholder tonic needs; the connector ignores it and dials the socket.
    let endpoint = Endpoint::from_static("http://kubelet.invalid");
    let channel = endpoint
        .connect_with_connector(tower::service_fn(move |_: Uri| {
            let socket = socket.clone();
            async move { UnixStream::connect(socket).await.map(TokioIo::new) }
        }))
        .await
        .map_err(|e| AskError::Failed(format!("could not connect: {}", chain(&e))))?;
    let mut client = PodResourcesListerClient::new(channel);
    let listed = client
        .list(ListPodResourcesRequest {})
        .await
        .map_err(|s| AskError::Failed(format!("List: {}", status_words(&s))))?
        .into_inner();
    // Older kubelets gate GetAllocatableResources: without it every GPU id not listed is
    // merely unknown, not known free.
    let allocatable = client
        .get_allocatable_resources(AllocatableResourcesRequest {})
        .await
        .ok()
        .map(|r| r.into_inner());
    Ok(PodTable::from_answers(&listed, allocatable.as_ref()))
}

fn status_words(status: &tonic::Status) -> String {
    let message = status.message();
    if message.is_empty() {
        format!("{:?}", status.code())
    } else {
        format!(
            "{:?}, {}",
            status.code(),
            gpumeter_core::sanitize::sanitize(message, 200)
        )
    }
}

/// An error and its causes on one line (tonic's transport error says little by itself).
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    gpumeter_core::sanitize::sanitize(&out, 300)
}
