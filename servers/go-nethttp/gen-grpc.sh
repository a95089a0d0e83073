#!/bin/sh
# Generates the Go code of contract/grpc/work.proto into ./workpb (git-ignored), run by the build.
set -eu
cd "$(dirname "$0")"
rm -rf workpb
mkdir -p bin workpb
# The two protoc plugins at the versions go.mod pins (its tool lines), so
# every build generates the same code.
go build -o bin/ google.golang.org/protobuf/cmd/protoc-gen-go google.golang.org/grpc/cmd/protoc-gen-go-grpc
# work.proto names no go_package (every language's server reads it), so
# the Go import path is given here.
m=Mwork.proto=netbench/servers/go-nethttp/workpb
protoc -I ../../contract/grpc \
	--plugin=protoc-gen-go=bin/protoc-gen-go --go_out=workpb --go_opt=paths=source_relative,$m \
	--plugin=protoc-gen-go-grpc=bin/protoc-gen-go-grpc --go-grpc_out=workpb --go-grpc_opt=paths=source_relative,$m \
	work.proto
