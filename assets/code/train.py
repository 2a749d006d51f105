"""A small training loop with no dependencies: the ranks of an Indexed Job meet at
MASTER_ADDR:MASTER_PORT (as torch.distributed's rendezvous would), then print their loss."""
import os, socket, sys, time

rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
master = (os.environ.get("MASTER_ADDR", "127.0.0.1"), int(os.environ.get("MASTER_PORT", "29500")))
steps, fail_at = int(os.environ.get("STEPS", "20")), int(os.environ.get("FAIL_AT_STEP", "0"))

if world > 1 and rank == 0:
    with socket.create_server(master) as server:
        server.settimeout(60)
        for _ in range(world - 1):
            peer, _ = server.accept()
            print(f"rank 0 met {peer.recv(64).decode()}", flush=True)
            peer.close()
elif world > 1:
    for _ in range(600):
        try:
            with socket.create_connection(master, timeout=1) as to_rank_0:
                to_rank_0.sendall(f"rank {rank}".encode())
            break
        except OSError:
            time.sleep(0.1)

for step in range(1, steps + 1):
    loss = 0.1 + (2.4 - 0.1 * rank) * 0.97**step
    print(f"step={step} loss={loss:.4f}", flush=True)
    if step == fail_at:
        sys.exit(3)
    time.sleep(float(os.environ.get("STEP_SECONDS", "0.05")))
print(f"rank {rank}: done", flush=True)
