/**
 * Memory and CPU of a child process, read from Linux's /proc the same way for every process a
 * bench compares: RSS from `/proc/<pid>/status` (VmRSS now, VmHWM the peak since the process
 * started) and CPU from `/proc/<pid>/stat` (utime + stime, in clock ticks).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (`getconf CLK_TCK`, 100 on Linux). */
export const CLK_TCK: number = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

export interface ProcReading {
  /** Resident set size now, bytes. */
  rss: number;
  /** Peak resident set size since the process started (VmHWM), bytes. */
  hwm: number;
  /** User + system CPU time so far, seconds (resolution 1/CLK_TCK). */
  cpu: number;
  /** performance.now() of the reading. */
  at: number;
}

const kib = (status: string, field: string): number => {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  if (!match) throw new Error(`no ${field} in /proc status`);
  return Number(match[1]) * 1024;
};

/** One reading of `pid`. Throws when the process is gone. */
export function readProc(pid: number): ProcReading {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return { rss: kib(status, 'VmRSS'), hwm: kib(status, 'VmHWM'), cpu: (utime + stime) / CLK_TCK, at: performance.now() };
}

/** What {@link sampleProc} saw over its window. */
export interface ProcWindow {
  seconds: number;
  /** CPU seconds used inside the window. */
  cpuSeconds: number;
  /** CPU used as a share of one core, percent. */
  cpuPercent: number;
  rssStart: number;
  rssEnd: number;
  rssMean: number;
  /** Highest VmRSS sampled inside the window. */
  rssPeak: number;
  /** VmHWM at the end: the peak over the process's whole life (start-up included). */
  hwm: number;
  samples: number;
}

/** Samples `pid` every `everyMs` until `stop()`; the window is from this call to `stop()`. */
export function sampleProc(pid: number, everyMs = 1_000): { stop(): ProcWindow } {
  const first = readProc(pid);
  const rss: number[] = [first.rss];
  const timer = setInterval(() => {
    try {
      rss.push(readProc(pid).rss);
    } catch {
      // gone: stop() reports what was seen
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const last = readProc(pid);
      rss.push(last.rss);
      const seconds = (last.at - first.at) / 1000;
      const cpuSeconds = last.cpu - first.cpu;
      return {
        seconds,
        cpuSeconds,
        cpuPercent: (cpuSeconds / seconds) * 100,
        rssStart: first.rss,
        rssEnd: last.rss,
        rssMean: rss.reduce((a, b) => a + b, 0) / rss.length,
        rssPeak: Math.max(...rss),
        hwm: last.hwm,
        samples: rss.length,
      };
    },
  };
}

export const MiB = 1024 * 1024;
export const mib = (bytes: number): string => `${(bytes / MiB).toFixed(1)} MiB`;

/** glibc's malloc heaps of a process, from /proc/<pid>/smaps (Linux). */
export interface MallocHeaps {
  /** RSS of the main arena (`[heap]`, grown with brk). */
  mainRss: number;
  /** Thread arenas: each a 64 MiB reservation, its used part `rw-p` followed by the rest `---p`. */
  threadArenas: Array<{ size: number; rss: number }>;
}

/**
 * The malloc heaps of `pid`: the main arena and the thread arenas glibc makes for threads that
 * allocate at the same time (up to 8 per core by default, `MALLOC_ARENA_MAX`). A thread arena
 * keeps the pages of memory freed inside it until glibc trims it, which it does only from its top.
 */
export function mallocHeaps(pid: number): MallocHeaps {
  const maps: Array<{ start: number; end: number; perm: string; name: string; rss: number }> = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const range = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (range) maps.push({ start: parseInt(range[1]!, 16), end: parseInt(range[2]!, 16), perm: range[3]!, name: range[4]!, rss: 0 });
    else if (line.startsWith('Rss:') && maps.length > 0) maps[maps.length - 1]!.rss = Number(/(\d+)/.exec(line)![1]) * 1024;
  }
  const HEAP_MAX = 64 * MiB;
  const threadArenas: Array<{ size: number; rss: number }> = [];
  for (let i = 0; i + 1 < maps.length; i++) {
    const used = maps[i]!;
    const rest = maps[i + 1]!;
    const whole = rest.end - used.start;
    if (used.name === '' && rest.name === '' && used.perm === 'rw-p' && rest.perm === '---p' && used.end === rest.start && whole === HEAP_MAX && used.start % HEAP_MAX === 0) {
      threadArenas.push({ size: used.end - used.start, rss: used.rss });
    }
  }
  return { mainRss: maps.filter((m) => m.name === '[heap]').reduce((sum, m) => sum + m.rss, 0), threadArenas };
}
