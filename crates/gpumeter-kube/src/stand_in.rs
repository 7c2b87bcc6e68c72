//! A stand-in kubelet for tests: the pod-resources service on a unix socket in a temporary
//! directory, answering with whole-GPU and MIG allocations, slowly, or with bytes that are not
//! gRPC. Built for this crate's tests and, with the `stand-in` feature, for others' (serve's
//! end-to-end test).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::PathBuf;
use std::time::Duration;

use tokio::net::UnixListener;
use tokio_stream::wrappers::UnixListenerStream;
use tonic::{Request, Response, Status};

use crate::proto::pod_resources_lister_server::{PodResourcesLister, PodResourcesListerServer};
use crate::proto::*;
pub use crate::proto::{ContainerDevices, PodResources};

pub const GPU0: &str = "GPU-0a0a0a0a-0000-0000-0000-000000000000";
pub const GPU1: &str = "GPU-1b1b1b1b-1111-1111-1111-111111111111";
pub const GPU2: &str = "GPU-2c2c2c2c-2222-2222-2222-222222222222";
pub const MIG_A: &str = "MIG-aaaaaaaa-0000-0000-0000-000000000000";
pub const MIG_B: &str = "MIG-bbbbbbbb-0000-0000-0000-000000000000";

/// What the stand-in kubelet answers: the pods' devices, the allocatable devices, and how
/// long it takes over `List`.
#[derive(Clone, Default)]
pub struct Kubelet {
    pub pods: Vec<PodResources>,
    pub allocatable: Vec<ContainerDevices>,
    pub delay: Duration,
}

#[tonic::async_trait]
impl PodResourcesLister for Kubelet {
    async fn list(
        &self,
        _: Request<ListPodResourcesRequest>,
    ) -> Result<Response<ListPodResourcesResponse>, Status> {
        tokio::time::sleep(self.delay).await;
        Ok(Response::new(ListPodResourcesResponse {
            pod_resources: self.pods.clone(),
        }))
    }

    async fn get_allocatable_resources(
        &self,
        _: Request<AllocatableResourcesRequest>,
    ) -> Result<Response<AllocatableResourcesResponse>, Status> {
        Ok(Response::new(AllocatableResourcesResponse {
            devices: self.allocatable.clone(),
        }))
    }
}

/// Devices of one resource.
pub fn devices(resource: &str, ids: &[&str]) -> ContainerDevices {
    ContainerDevices {
        resource_name: resource.into(),
        device_ids: ids.iter().map(|s| s.to_string()).collect(),
    }
}

/// A pod of one container.
pub fn pod(
    namespace: &str,
    name: &str,
    container: &str,
    devs: Vec<ContainerDevices>,
) -> PodResources {
    PodResources {
        name: name.into(),
        namespace: namespace.into(),
        containers: vec![ContainerResources {
            name: container.into(),
            devices: devs,
        }],
    }
}

/// A node: GPU 0 whole to ml/trainer-7f9c, GPU 1's two MIG slices to two inference pods, GPU 2
/// free, and a NIC (not a GPU) beside.
pub fn node() -> Kubelet {
    Kubelet {
        pods: vec![
            pod(
                "ml",
                "trainer-7f9c",
                "trainer",
                vec![
                    devices("nvidia.com/gpu", &[GPU0]),
                    devices("example.com/nic", &["eth1"]),
                ],
            ),
            pod(
                "serve",
                "infer-a",
                "server",
                vec![devices("nvidia.com/mig-1g.10gb", &[MIG_A])],
            ),
            pod(
                "serve",
                "infer-b",
                "server",
                vec![devices("nvidia.com/mig-1g.10gb", &[MIG_B])],
            ),
            pod("web", "nginx", "nginx", vec![]),
        ],
        allocatable: vec![
            devices("nvidia.com/gpu", &[GPU0, GPU2]),
            devices("nvidia.com/mig-1g.10gb", &[MIG_A, MIG_B]),
        ],
        delay: Duration::ZERO,
    }
}

/// The stand-in serving on its own thread and runtime until dropped.
pub struct StandIn {
    dir: tempfile::TempDir,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl StandIn {
    /// Where it listens.
    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("kubelet.sock")
    }

    /// Serves `kubelet`'s answers.
    pub fn serve(kubelet: Kubelet) -> StandIn {
        Self::run(move |listener, stop| {
            Box::pin(async move {
                tonic::transport::Server::builder()
                    .add_service(PodResourcesListerServer::new(kubelet))
                    .serve_with_incoming_shutdown(UnixListenerStream::new(listener), async {
                        let _ = stop.await;
                    })
                    .await
                    .unwrap();
            })
        })
    }

    /// A socket that accepts and answers every connection with bytes that are not HTTP/2.
    pub fn garbage() -> StandIn {
        Self::run(|listener, mut stop| {
            Box::pin(async move {
                use tokio::io::AsyncWriteExt;
                loop {
                    tokio::select! {
                        accepted = listener.accept() => {
                            let (mut conn, _) = accepted.unwrap();
                            let _ = conn.write_all(b"HTTP/1.0 200 OK\r\n\r\n\x1b[2Jnot grpc").await;
                        }
                        _ = &mut stop => return,
                    }
                }
            })
        })
    }

    fn run(
        body: impl FnOnce(
            UnixListener,
            tokio::sync::oneshot::Receiver<()>,
        ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>
        + Send
        + 'static,
    ) -> StandIn {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubelet.sock");
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let (ready, is_ready) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = UnixListener::bind(&path).unwrap();
                ready.send(()).unwrap();
                body(listener, stopped).await;
            });
        });
        is_ready.recv().unwrap();
        StandIn { dir, _stop: stop }
    }
}
