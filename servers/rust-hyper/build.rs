//! Generates the gRPC server code of `netbench.Work` from the contract's
//! .proto into cargo's OUT_DIR (under target/, never committed), with
//! tonic-prost-build; it runs Debian's protoc (protobuf-compiler).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    tonic_prost_build::configure()
        .build_client(false)
        .compile_protos(
            &["../../contract/grpc/work.proto"],
            &["../../contract/grpc"],
        )?;
    Ok(())
}
