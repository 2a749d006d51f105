# The watcher's image: Gantry itself, to run in the cluster (`gantry watcher install`).
# A release build without the simulated cloud, on a small runtime image (glibc and CA
# certificates, no shell), as a non-root user. Build it from the repository's top:
#   docker build -t us-docker.pkg.dev/PROJECT/REPO/gantry:VERSION .
#   gcloud builds submit --tag us-docker.pkg.dev/PROJECT/REPO/gantry:VERSION   (no local Docker)

FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
# The image's gcc builds aws-lc (rustls' provider); the rest is Cargo's.
COPY . .
RUN cargo build --release --locked --no-default-features --bin gantry \
    && install -D -m 0755 target/release/gantry /out/gantry

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/gantry /usr/local/bin/gantry
# The user the watcher's Deployment asks for (runAsUser 10001); its files are mounted read-only.
USER 10001:10001
ENTRYPOINT ["/usr/local/bin/gantry"]
