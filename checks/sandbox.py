"""A worker's sandbox in grading mode: started by the runner (root, Linux) as

    python -I -S checks/sandbox.py SPEC.json

it builds the worker's view of the machine and then becomes the worker,
as an unprivileged user of its own. SPEC (written by `checks.grading`):

    {"root": DIR, "binds": [[HOST, INSIDE, WRITABLE], ...], "uid": N, "gid": N,
     "cwd": INSIDE, "argv": [...], "env": {...}}

In new mount, IPC and network namespaces: an empty file system (a tmpfs on
ROOT) holding only the system's programs and libraries (/usr, /etc and the
/bin, /lib links), the Python installations the runner runs from, and the
BINDS (the judge's public files, the item's package, its run directory),
each read-only unless WRITABLE; its own /tmp and /dev/shm (not executable),
/proc showing its own processes only, and a few devices. The network is the
namespace's own loopback. Then, in this process, before exec: no groups,
the given gid and uid (which own nothing else on the machine), no way to
gain privileges again (no_new_privs), and death with the runner.

Standard library only, and nothing of the lab's imported: it runs before the
lab is importable, and as root. A step that fails is one line on stderr and
exit status 125, before anything of the worker's runs.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import signal
import socket
import struct
import sys
from typing import Any, Dict, List

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWNET = 0x00020000, 0x08000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
SYSTEM = ("usr", "etc", "bin", "sbin", "lib", "lib32", "lib64", "libx32")  # what every program needs to run
DEVICES = ("null", "zero", "full", "random", "urandom")
FAILED = 125  # the exit status of a sandbox that could not be made
TMPFS = "mode=1777,size=512m"

_libc = ctypes.CDLL(None, use_errno=True)


class SandboxError(Exception):
    pass


def call(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise SandboxError(f"{what}: {os.strerror(number)}")


def mount(source: str, target: str, kind: str, flags: int, data: str = "") -> None:
    call(_libc.mount(source.encode() if source else None, target.encode(), kind.encode() if kind else None,
                     flags, data.encode() if data else None), f"mount {source or kind} on {target}")


def bind(root: str, host: str, inside: str, writable: bool, flags: int = MS_NOSUID | MS_NODEV) -> None:
    """`host` seen at `inside` (read-only unless `writable`)."""
    target = root + inside
    if os.path.isdir(host):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.lexists(target):
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    mount(host, target, "", MS_BIND | MS_REC)
    mount("", target, "", MS_BIND | MS_REMOUNT | flags | (0 if writable else MS_RDONLY))


def loopback_up() -> None:
    """The new network namespace's loopback, which starts down."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(probe, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(probe, SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))


def build(spec: Dict[str, Any]) -> None:
    """The view of the machine, in namespaces of this process's own."""
    root = str(spec["root"])
    call(_libc.unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET), "unshare (mount, IPC and network namespaces)")
    mount("", "/", "", MS_REC | MS_PRIVATE)  # nothing mounted here reaches the machine's own view
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755")
    for name in SYSTEM:
        place = "/" + name
        if os.path.islink(place):
            os.symlink(os.readlink(place), root + place)
        elif os.path.isdir(place):
            bind(root, place, place, False)
    binds: List[List[Any]] = spec["binds"]
    for host, inside, writable in binds:
        bind(root, str(host), str(inside), bool(writable),
             MS_NOSUID | MS_NODEV | (MS_NOEXEC if writable or str(inside).startswith("/lab") else 0))
    os.makedirs(root + "/dev", exist_ok=True)
    for device in DEVICES:
        bind(root, "/dev/" + device, "/dev/" + device, True, MS_NOSUID | MS_NOEXEC)
    os.symlink("/proc/self/fd", root + "/dev/fd")
    for number, stream in enumerate(("stdin", "stdout", "stderr")):
        os.symlink(f"/proc/self/fd/{number}", root + "/dev/" + stream)
    for place in ("/tmp", "/dev/shm"):
        os.makedirs(root + place, exist_ok=True)
        mount("tmpfs", root + place, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, TMPFS)
    os.makedirs(root + "/proc", exist_ok=True)
    mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")
    loopback_up()
    os.chroot(root)
    os.chdir(str(spec["cwd"]))


def become(spec: Dict[str, Any]) -> None:
    """The worker's user, for good."""
    uid, gid = int(spec["uid"]), int(spec["gid"])
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if os.getuid() != uid or os.geteuid() != uid or os.getgroups() not in ([], [gid]):
        raise SandboxError("the worker's user could not be taken")
    call(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    call(_libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0), "the death signal")  # after the uid: it resets


def main() -> None:
    try:
        with open(sys.argv[1], encoding="utf-8") as file:
            spec = json.load(file)
        build(spec)
        become(spec)
        os.umask(0o077)
        os.execve(spec["argv"][0], spec["argv"], {str(k): str(v) for k, v in spec["env"].items()})
    except (OSError, SandboxError, ValueError, KeyError, IndexError, TypeError) as exc:
        print(f"sandbox: {exc}", file=sys.stderr)
        os._exit(FAILED)


if __name__ == "__main__":
    main()
