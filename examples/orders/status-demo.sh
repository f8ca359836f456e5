#!/bin/sh
# natsplan status on the orders example, with the nats CLI as the workers.
# Needs nats-server and nats on PATH; uses a throw-away server on port 14222.
set -eu
cd "$(dirname "$0")"
dir=$(mktemp -d)
nats-server -js -p 14222 -sd "$dir" >"$dir/server.log" 2>&1 &
server=$!
trap 'kill $server; rm -rf "$dir"' EXIT
export NATS_URL=nats://127.0.0.1:14222
sleep 1

natsplan apply --auto-approve . >/dev/null
for c in c1 c2 c3 c4 c5 c6 c7 c8; do nats pub -q "orders.$c.created" '{}'; done
nats pub -q --count 150 orders.acme.created '{}'

echo "== one email message taken and not acked; nobody pulls the lanes"
nats consumer next ORDERS email --no-ack --count 1 >/dev/null
natsplan status . || echo "exit $? (a condition holds)"

echo "== workers drain every lane and the pool"
for lane in 0 1 2 3 4 5 6 7; do
  # One message at a time, as a per-key lane hands them out; it stops at the first
  # pull that times out, when the lane is empty.
  nats consumer next ORDERS "fulfilment-$lane" --ack --count 200 --timeout 1s >/dev/null 2>&1 || true
done
nats consumer next ORDERS email --ack --count 157 >/dev/null
sleep 31 # the message taken without an ack comes back after ack_wait (30s)
nats consumer next ORDERS email --ack --count 1 >/dev/null
natsplan status .
