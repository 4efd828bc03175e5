#!/usr/bin/env bash
# Builds gorr, records the bundled example and replays it twice.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/gorr ./cmd/gorr
mkdir -p bin/examples
gcc -O1 -g -pthread -o bin/examples/hello examples/hello/hello.c
trace=$(mktemp -d)/hello-trace
echo "== recording (the output differs every time you record)"
bin/gorr record -o "$trace" bin/examples/hello
echo "== replaying (the output is the recorded run's, every time)"
bin/gorr replay -a "$trace"
bin/gorr replay -a "$trace" > "$trace.replay2"
echo "== the second replay printed the same bytes: $(cmp -s <(bin/gorr replay -a "$trace") "$trace.replay2" && echo yes || echo NO)"
bin/gorr ps "$trace"
