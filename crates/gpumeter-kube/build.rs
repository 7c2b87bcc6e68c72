//! Compiles the kubelet's pod-resources proto (proto/podresources_v1.proto) into the gRPC
//! client `src/ask.rs` uses: protox parses it in Rust, so no `protoc` is needed to build.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    const PROTO: &str = "proto/podresources_v1.proto";
    println!("cargo:rerun-if-changed={PROTO}");
    let descriptors = protox::compile([PROTO], ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        // The server half is the tests' stand-in kubelet.
        .build_server(true)
        .build_transport(false)
        .compile_fds(descriptors)?;
    Ok(())
}
