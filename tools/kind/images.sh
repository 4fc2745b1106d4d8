# Image builders of build.sh (sourced by it; uses its variables: here, bin, dir, recipe,
# controlplane_bin, KUBERNETES_VERSION, DEBIAN_SUITE). Each function prints the image it made.

# Debian packages of the two root filesystems. The node's are what kind's base image installs and
# that Debian has (containerd and runc are Debian's, not kind's own builds).
base_packages=iptables,conntrack,ca-certificates
node_packages=systemd,systemd-sysv,dbus,containerd,runc,containernetworking-plugins,iptables,nftables
node_packages+=,conntrack,iproute2,ethtool,util-linux,mount,kmod,libseccomp2,pigz,bash
node_packages+=,ca-certificates,procps,jq,socat,e2fsprogs

have_image() { docker image inspect "$1" >/dev/null 2>&1; }

debian_mirror() {
  local uri
  uri=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
  echo "${uri:-http://deb.debian.org/debian}"
}

# rootfs_image NAME PACKAGES: a Debian minbase root filesystem with PACKAGES, imported as an image
# named by the package list (a slow step that other changes to the recipe need not repeat).
rootfs_image() {
  local image root="$dir/rootfs-$1"
  image="simlock-kind/rootfs-$1:$DEBIAN_SUITE-$(echo "$2" | sha256sum | cut -c1-12)"
  if ! have_image "$image"; then
    log "debootstrap $DEBIAN_SUITE ($1: $2)"
    rm -rf "$root"
    debootstrap --variant=minbase --include="$2" "$DEBIAN_SUITE" "$root" "$(debian_mirror)" \
      >"$dir/debootstrap-$1.log" 2>&1 || {
      tail -n 20 "$dir/debootstrap-$1.log" >&2
      missing "a Debian $DEBIAN_SUITE root filesystem (debootstrap failed; log: $dir/debootstrap-$1.log)"
    }
    # No package caches or lists in the image; a fresh machine-id is made where it runs.
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    : >"$root/etc/machine-id"
    tar -C "$root" --numeric-owner -c . | docker import - "$image" >/dev/null
    rm -rf "$root"
  fi
  echo "$image"
}

# build_image TAG CONTEXT DOCKERFILE-TEXT (its output in a log, shown when it fails)
build_image() {
  docker build -t "$1" -f - "$2" <<<"$3" >"$dir/docker-build.log" 2>&1 || {
    tail -n 20 "$dir/docker-build.log" >&2
    missing "docker build of $1 (log: $dir/docker-build.log)"
  }
}

# The Node base of the Dockerfile, as node:24-slim would be: the pinned Node 24 binary that the
# suite runs on (tools/ensure-node.sh, ADR 0012) and this machine's npm.
build_node_base() {
  local version image context npm from node
  node="$("$here/../ensure-node.sh" 24)/node" || missing "Node.js 24 (tools/ensure-node.sh failed)"
  version=$("$node" --version)
  image="simlock-kind/nodejs:${version#v}-$DEBIAN_SUITE-$recipe"
  if ! have_image "$image"; then
    log "Node $version base image from the pinned node binary"
    context=$(mktemp -d)
    npm=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
    cp "$node" "$context/node"
    cp -r "$npm" "$context/npm"
    # This machine's trust store, so that npm inside a build trusts what npm here trusts.
    cp /etc/ssl/certs/ca-certificates.crt "$context/ca-certificates.crt"
    from=$(rootfs_image base "$base_packages")
    build_image "$image" "$context" "FROM $from
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --create-home node
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CMD [\"node\"]"
    rm -rf "$context"
  fi
  echo "$image"
}

# The images kubeadm runs, under the names it asks for (kubeadm config images list), saved as
# tarballs into $1. etcd is the pinned etcd of tools/controlplane under kubeadm's etcd tag.
save_control_plane_images() {
  local out=$1 context reference name base
  context=$(mktemp -d)
  cp "$controlplane_bin"/{kube-apiserver,kube-controller-manager,kube-scheduler,etcd} "$context/"
  cp "$bin"/{kube-proxy,pause,coredns} "$context/"
  base=$(rootfs_image base "$base_packages")
  for reference in $("$bin/kubeadm" config images list --kubernetes-version "$KUBERNETES_VERSION"); do
    name=${reference##*/}
    name=${name%%:*}
    case "$name" in
      kube-apiserver | kube-controller-manager | kube-scheduler | etcd)
        build_image "$reference" "$context" "FROM scratch
COPY $name /usr/local/bin/$name
ENV PATH=/usr/local/bin"
        ;;
      kube-proxy)
        build_image "$reference" "$context" "FROM $base
COPY kube-proxy /usr/local/bin/kube-proxy"
        ;;
      pause | coredns)
        build_image "$reference" "$context" "FROM scratch
COPY $name /$name
ENTRYPOINT [\"/$name\"]"
        ;;
      *) missing "a recipe for the image $reference that kubeadm asks for" ;;
    esac
    docker save -o "$out/$name.tar" "$reference"
  done
  rm -rf "$context"
}

build_kind_node_image() {
  local image="simlock-kind/node:$KUBERNETES_VERSION-$recipe" context kind_files container status from
  if have_image "$image"; then
    echo "$image"
    return
  fi
  log "kind node image $image"
  context=$(mktemp -d)
  # kind's base image files, from the kind module being built: its entrypoint, systemd units and
  # helper scripts; our containerd config replaces kind's.
  kind_files=$(cd "$here/kind" && go list -m -f '{{.Dir}}' sigs.k8s.io/kind)/images/base/files
  mkdir -p "$context/kind-base"
  cp -r "$kind_files/usr" "$kind_files/kind" "$kind_files/etc" "$context/kind-base/"
  rm -f "$context/kind-base/etc/containerd/config.toml"
  chmod -R u+w "$context/kind-base"
  cp -r "$here/node" "$context/node"
  cp "$here/runc-wrapper.sh" "$context/runc-wrapper"
  cp "$bin/kubelet" "$bin/kubeadm" "$controlplane_bin/kubectl" "$context/"
  from=$(rootfs_image node "$node_packages")
  build_image "$image-unloaded" "$context" "FROM $from
COPY kind-base/ /
COPY node/ /
COPY runc-wrapper /usr/local/sbin/runc-wrapper
COPY kubelet kubeadm kubectl /usr/bin/
RUN chmod 0755 /usr/local/bin/* /kind/bin/* /usr/local/sbin/runc-wrapper /usr/bin/kube* \
 && sed -i 's#^ExecStart=/usr/local/bin/containerd#ExecStart=/usr/bin/containerd#' /etc/systemd/system/containerd.service \
 && find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete \
 && rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \
    /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \
    /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/* \
 && echo ReadKMsg=no >> /etc/systemd/journald.conf \
 && systemctl enable kubelet.service containerd.service undo-mount-hacks.service \
 && systemctl mask systemd-binfmt.service \
 && mkdir -p /etc/kubernetes/manifests \
 && echo $KUBERNETES_VERSION > /kind/version \
 && ctr oci spec \
    | jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {\"path\": \"/kind/bin/mount-product-files.sh\"}' \
    | jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT [\"/usr/local/bin/entrypoint\", \"/sbin/init\"]"
  # Preload: containerd in a container of that image imports the tarballs into its own store
  # (unpacked when first run, as kind's node images do), then the container becomes the image.
  mkdir -p "$context/images"
  save_control_plane_images "$context/images"
  container=$(docker run -d --privileged -v "$context/images:/kind/preload:ro" --entrypoint /bin/bash \
    "$image-unloaded" -c '
      containerd >/tmp/containerd.log 2>&1 &
      for _ in $(seq 1 100); do ctr version >/dev/null 2>&1 && break; sleep 0.1; done
      for tarball in /kind/preload/*.tar; do
        ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned \
          --all-platforms --no-unpack --digests "$tarball" || exit 1
      done
      ctr --namespace=k8s.io images list -q
      kill %1 && wait')
  status=$(docker wait "$container")
  docker logs "$container" >"$dir/preload.log" 2>&1
  if [ "$status" != 0 ]; then
    docker rm -f "$container" >/dev/null
    tail -n 20 "$dir/preload.log" >&2
    missing "the preloaded images of the node image (log: $dir/preload.log)"
  fi
  docker commit --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' --change 'CMD []' \
    "$container" "$image" >/dev/null
  docker rm -f "$container" >/dev/null
  docker rmi "$image-unloaded" >/dev/null
  rm -rf "$context"
  echo "$image"
}
