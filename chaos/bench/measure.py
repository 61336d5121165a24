"""measure.py — what the benches read of a process (in /proc) and of a
folder on disk.

Each process reader answers for one pid, and a missing process (it
ended, or was never started) reads as nothing: None from stat_fields, 0
from the others.
"""

import os


def stat_file_fields(path):
    """A stat file's fields (/proc/PID/stat, or a thread's
    /proc/PID/task/TID/stat) after the command name, which may hold
    spaces and parentheses; None if it is gone."""
    try:
        with open(path) as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def stat_fields(pid):
    """/proc/PID/stat's fields after the command name: [0] state, [1]
    ppid, [9] major faults, [11] utime, [12] stime, [19] start time;
    None if pid is gone."""
    return stat_file_fields("/proc/%d/stat" % pid)


def cpu_ticks(pid):
    """utime + stime of pid (every thread), in clock ticks."""
    f = stat_fields(pid)
    return int(f[11]) + int(f[12]) if f else 0


def cpu_seconds(pids):
    """utime + stime of every process of pids, summed, in seconds."""
    return sum(cpu_ticks(p) for p in pids) / os.sysconf("SC_CLK_TCK")


def thread_cpu(pids):
    """CPU seconds so far of every thread of pids, summed by process and
    thread name ("kv-node/kv-conn"; the threads name themselves,
    core/thread_name.h), nng's and RocksDB's threads by their prefix
    ("kv-node/nng", "kv-node/rocksdb"). A thread that ended is left out."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in pids:
        try:
            with open("/proc/%d/comm" % pid) as f:
                proc = f.read().strip()
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:
            continue
        for tid in tids:
            base = "/proc/%d/task/%s/" % (pid, tid)
            try:
                with open(base + "comm") as f:
                    name = f.read().strip()
            except OSError:
                continue
            fields = stat_file_fields(base + "stat")
            if fields is None:
                continue
            for prefix in ("nng:", "rocksdb:"):
                if name.startswith(prefix):
                    name = prefix[:-1]
            key = "%s/%s" % (proc, name)
            out[key] = out.get(key, 0.0) + (
                int(fields[11]) + int(fields[12])) / tick
    return out


def major_faults(pid):
    """Major page faults of pid so far."""
    f = stat_fields(pid)
    return int(f[9]) if f else 0


def rss_mb(pid):
    """pid's resident size (VmRSS), in MB."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def disk_read_bytes(pid):
    """Bytes pid has read from storage so far (/proc/PID/io read_bytes:
    what reached the disk, not what the page cache gave)."""
    try:
        with open("/proc/%d/io" % pid) as f:
            for line in f:
                if line.startswith("read_bytes:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def disk_bytes(path):
    """Bytes the files under path take on disk (allocated blocks)."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return total
