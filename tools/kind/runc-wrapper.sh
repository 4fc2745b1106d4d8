#!/bin/sh
# runc, minus CAP_SYS_RESOURCE when this machine's capability bounding set lacks it. A privileged
# container asks for every capability; runc fails ("unable to apply caps") when one of them is not
# in the bounding set. This removes that one capability from the bundle's config.json (`create` and
# `run --bundle DIR`) and from the process file of `exec --process FILE`, then runs the real runc.
# dockerd uses it as its default runtime on such machines, and the kind node's containerd for pods.
set -eu
real=/usr/sbin/runc
[ -x "$real" ] || real=/usr/bin/runc

# CAP_SYS_RESOURCE is capability 24: where the bounding set has it, there is nothing to do.
bounding=$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)
if [ $(((0x$bounding >> 24) & 1)) -eq 1 ]; then exec "$real" "$@"; fi

strip() {
  [ -f "$1" ] || return 0
  jq 'walk(if type == "object" and has("bounding") then
        map_values(if type == "array" then map(select(. != "CAP_SYS_RESOURCE")) else . end)
      else . end)' "$1" >"$1.simlock" && mv "$1.simlock" "$1"
}

command=""
previous=""
for argument in "$@"; do
  case "$argument" in
    create | run | exec) [ -z "$command" ] && command=$argument ;;
  esac
  case "$previous:$argument" in
    --bundle:* | -b:*) [ "$command" = exec ] || strip "$argument/config.json" ;;
    --process:* | -p:*) [ "$command" = exec ] && strip "$argument" ;;
  esac
  case "$argument" in
    --bundle=*) strip "${argument#--bundle=}/config.json" ;;
    --process=*) strip "${argument#--process=}" ;;
  esac
  previous=$argument
done
# A create or run without --bundle uses the current folder.
case "$command" in create | run) case " $* " in *" --bundle"* | *" -b "*) ;; *) strip config.json ;; esac ;; esac
exec "$real" "$@"
