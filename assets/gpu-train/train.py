"""Data-parallel training for assets/config/gpu-indexed.toml: one process per pod, one GPU
each, the ranks meeting through what Gantry gives an Indexed Job (RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT: torch.distributed's env:// rendezvous). The data is synthetic, so
nothing is downloaded: images whose label a fixed random projection decides, which a small
residual network learns. Rank 0 writes a checkpoint beside this file after each epoch (the
working directory is writable; it goes with the pod, so keep what matters in a bucket)."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(out)))


class Net(nn.Module):
    def __init__(self, classes=10, width=64):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU()
        )
        self.blocks = nn.Sequential(Block(width), nn.MaxPool2d(2), Block(width), nn.MaxPool2d(2))
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean((2, 3)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--steps-per-epoch", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", 0) if cuda else torch.device("cpu")
    print(f"rank {rank}/{world} on {torch.cuda.get_device_name(0) if cuda else 'cpu'}", flush=True)

    model = nn.parallel.DistributedDataParallel(
        Net().to(device), device_ids=[0] if cuda else None
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    total = args.epochs * args.steps_per_epoch
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, args.lr, total_steps=total)
    # The task is the same on every rank; each rank draws its own images.
    projection = torch.randn(3 * 32 * 32, 10, generator=torch.Generator().manual_seed(0))
    draws = torch.Generator().manual_seed(1000 + rank)

    step = 0
    for epoch in range(1, args.epochs + 1):
        for _ in range(args.steps_per_epoch):
            images = torch.randn(args.batch_size, 3, 32, 32, generator=draws)
            labels = (images.flatten(1) @ projection).argmax(1)
            loss = F.cross_entropy(model(images.to(device)), labels.to(device))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
            step += 1
            if step % 50 == 0:
                lr = schedule.get_last_lr()[0]
                print(f"epoch {epoch}/{args.epochs} step={step} loss={loss.item():.4f} lr={lr:.5f}", flush=True)
        if rank == 0:
            torch.save(model.module.state_dict(), "checkpoint.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
