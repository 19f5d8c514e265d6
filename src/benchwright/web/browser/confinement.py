"""The trial browser's confinement: what Chromium may open, see and be.

The agent drives this browser, so the agent must reach nothing through it but the sites. Two
layers, both outside the agent's reach (browser-use's own URL check is not one: it refuses
`file:///x` but lets `file://localhost/x` and `chrome://version` through):

- a managed policy that blocks every URL but http(s) (and `about:blank`): `file:`, `chrome:`,
  `view-source:`, `devtools:`, `data:` pages fail with ERR_BLOCKED_BY_ADMINISTRATOR, however
  they are asked for (CDP, a link, a redirect, a new tab). Chromium reads managed policies only
  from /etc/chromium/policies, so the policy is mounted there in the browser's own mount
  namespace: the host's /etc is left alone;
- bubblewrap around the browser: it sees /usr, a few /etc entries and its profile folder, a
  private /tmp and /dev/shm, its own PID namespace; as root it runs as a fresh unprivileged uid,
  so Chromium keeps its own sandbox (no `--no-sandbox`). The network is the host's (the sites
  and the DevTools port are on loopback; the host resolver rule limits names, launch.py).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path

from benchwright.errors import PrerequisiteError
from benchwright.files.nofollow import remove_tree
from benchwright.sandbox.bwrap import usr_binds

POLICY: dict[str, list[str]] = {
    # "*" does not cover chrome:// and its kin: they are named
    "URLBlocklist": ["*", "chrome://*", "chrome-untrusted://*", "devtools://*"],
    "URLAllowlist": ["http://*", "https://*", "about:blank", "about:srcdoc"],
}
"""The managed policy every trial browser runs under."""
POLICY_DIR = Path("/etc/chromium/policies")
"""Where Debian's Chromium reads policies (`managed/*.json`)."""
ETC_ENTRIES = ("chromium.d", "fonts", "ld.so.cache", "hosts", "nsswitch.conf", "localtime",
               "ssl", "ca-certificates")
"""The /etc the browser sees: its launcher's settings, fonts, libraries, certificates."""
FONT_CACHE = Path("/var/cache/fontconfig")
"""The system's font cache, read-only."""
UID_BASE = 1_800_000_000
UID_SPAN = 10_000_000
"""Fresh host uids for browsers started by root: above any account or subordinate range."""
MADE = frozenset(Path(p) for p in ("/tmp", "/dev", "/etc", "/usr"))
"""Folders the sandbox has before the profile's parents are made (left as they are)."""
INSTALL_BWRAP = "apt-get install -y bubblewrap"


def browser_uid() -> int | None:
    """The uid the browser runs as: a fresh one when the harness is root, else the harness's."""
    return UID_BASE + secrets.randbelow(UID_SPAN) if os.geteuid() == 0 else None


def prepare(user_data_dir: Path, uid: int | None) -> Path:
    """Make the profile folder (the browser's) and the policy folder beside it (read-only to
    the browser); return the policy folder."""
    user_data_dir.mkdir(parents=True, exist_ok=True)
    if uid is not None:
        os.chown(user_data_dir, uid, uid, follow_symlinks=False)
    policy = user_data_dir.parent / "chromium-policy"
    remove_tree(policy, ignore_errors=True)
    (policy / "managed").mkdir(parents=True)
    (policy / "managed" / "benchwright.json").write_text(json.dumps(POLICY))
    return policy


def confined(argv: list[str], user_data_dir: Path, policy: Path, uid: int | None) -> list[str]:
    """`argv` (Chromium's command line) run inside bubblewrap, as `uid` when given."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise PrerequisiteError("the trial browser runs in bubblewrap, which is not installed",
                                hint=INSTALL_BWRAP)
    home = str(user_data_dir)
    args = [bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", *_identity(uid), *_system(Path(argv[0])),
            "--proc", "/proc", "--dev", "/dev",
            "--perms", "1777", "--tmpfs", "/dev/shm", "--perms", "1777", "--tmpfs", "/tmp",
            "--perms", "0755", "--dir", str(POLICY_DIR.parent),
            "--ro-bind", str(policy), str(POLICY_DIR), *_folder(user_data_dir),
            "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", home,
            "--setenv", "XDG_CONFIG_HOME", f"{home}/.config",
            "--setenv", "XDG_CACHE_HOME", f"{home}/.cache", "--"]
    return [*args, *_drop_to(uid), *argv]


def _identity(uid: int | None) -> list[str]:
    # As root bubblewrap runs privileged (no user namespace) and setpriv drops to `uid`; a uid
    # mapped to root through a user namespace would still own root's files (/etc/shadow).
    if uid is None:
        return ["--unshare-user"]
    return ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]


def _drop_to(uid: int | None) -> list[str]:
    if uid is None:
        return []
    return ["/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]


def _system(executable: Path) -> list[str]:
    args = usr_binds()
    if not executable.is_relative_to("/usr"):  # a Chromium of its own: its folder
        args += [*_parents(executable.parent), "--ro-bind", str(executable.parent),
                 str(executable.parent)]
    args += ["--perms", "0755", "--dir", "/etc"]
    for name in ETC_ENTRIES:
        if (Path("/etc") / name).exists():
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    if FONT_CACHE.is_dir():  # without it fontconfig scans every font at each start
        args += [*_parents(FONT_CACHE), "--ro-bind", str(FONT_CACHE), str(FONT_CACHE)]
    return args


def _folder(path: Path) -> list[str]:
    """The profile folder, writable, at its own path (its DevToolsActivePort is read there)."""
    return [*_parents(path), "--bind", str(path), str(path)]


def _parents(path: Path) -> list[str]:
    # folders bubblewrap makes are 0700: the browser's uid must pass through them
    args: list[str] = []
    for parent in reversed(path.parents[:-1]):
        if parent not in MADE:
            args += ["--perms", "0755", "--dir", str(parent)]
    return args
