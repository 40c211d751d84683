"""chrome_launcher: find Chrome, launch it in its own process group, and always kill it.

Knows nothing of conversations or tools. The public names are re-exported here; other packages
use nothing else.
"""

from ._argv import ArgvSpec, build_argv, marker_instance, user_data_dir
from ._binary import CHROMIUM, HEADLESS_SHELL, ChromeBinary, find_chrome
from ._endpoint import parse_active_port_file, parse_listening_line
from ._errors import (
    ChromeNotFoundError,
    InstanceLockError,
    LauncherError,
    LaunchError,
    LaunchTimeoutError,
    RegistryError,
)
from ._instance import (
    MARKER_SWITCH,
    InstanceLock,
    instance_is_alive,
    is_valid_instance_id,
    new_instance_id,
)
from ._kill import KillReport, KillTarget, KillTiming, kill_ladder
from ._launch import LaunchOptions, launch_chrome
from ._persistent import prepare_persistent_profile, processes_on_profile
from ._process import ChromeProcess, ChromeState, LaunchInfo
from ._procfs import (
    ProcStat,
    all_stats,
    boot_id,
    cmdline,
    group_rss_bytes,
    live_group_members,
    owner_uid,
    read_stat,
)
from ._registry import PidRecord, RecordEntry, read_records, remove_record, write_record
from ._state import StateLayout, default_state_dir, make_private_dir, remove_tree
from ._usage import GroupUsage, group_pss_bytes, group_usage, pss_bytes

__all__ = [
    "CHROMIUM",
    "HEADLESS_SHELL",
    "MARKER_SWITCH",
    "ArgvSpec",
    "ChromeBinary",
    "ChromeNotFoundError",
    "ChromeProcess",
    "ChromeState",
    "GroupUsage",
    "InstanceLock",
    "InstanceLockError",
    "KillReport",
    "KillTarget",
    "KillTiming",
    "LaunchError",
    "LaunchInfo",
    "LaunchOptions",
    "LaunchTimeoutError",
    "LauncherError",
    "PidRecord",
    "ProcStat",
    "RecordEntry",
    "RegistryError",
    "StateLayout",
    "all_stats",
    "boot_id",
    "build_argv",
    "cmdline",
    "default_state_dir",
    "find_chrome",
    "group_pss_bytes",
    "group_rss_bytes",
    "group_usage",
    "instance_is_alive",
    "is_valid_instance_id",
    "kill_ladder",
    "launch_chrome",
    "live_group_members",
    "make_private_dir",
    "marker_instance",
    "new_instance_id",
    "owner_uid",
    "parse_active_port_file",
    "parse_listening_line",
    "prepare_persistent_profile",
    "processes_on_profile",
    "pss_bytes",
    "read_records",
    "read_stat",
    "remove_record",
    "remove_tree",
    "user_data_dir",
    "write_record",
]
