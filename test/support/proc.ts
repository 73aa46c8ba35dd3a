/**
 * What Linux's /proc says about running processes: parents, descendants, command lines, resident
 * memory and listening ports. Tests find the processes a supervisor started this way, so that the
 * supervisor itself never has to print anything for them.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** A process's parent and state from /proc/<pid>/stat, or null once it is gone. */
export function procStat(pid: number): { ppid: number; state: string } | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // "pid (comm) state ppid …": the command may hold spaces and parentheses.
  const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(ppid), state };
}

/** Every process's children, as they are now. */
function childrenByParent(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), Number(entry)]);
  }
  return children;
}

/** The direct children of `pid`, as they are now. */
export function childrenOf(pid: number): number[] {
  return childrenByParent().get(pid) ?? [];
}

/** Every process descended from `pid` (children, their children, …), as they are now. */
export function descendants(pid: number): number[] {
  const children = childrenByParent();
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    const next = children.get(queue.shift()!) ?? [];
    found.push(...next);
    queue.push(...next);
  }
  return found;
}

/** Whether the process still runs (a zombie, ended but not yet reaped, does not). */
export function running(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== null && stat.state !== 'Z';
}

/** The process's arguments (argv, the executable first), or null once it is gone. */
export function commandLine(pid: number): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((arg) => arg !== '');
  } catch {
    return null;
  }
}

/** Resident memory (VmRSS of /proc/<pid>/status) in bytes, or null once the process is gone. */
export function residentBytes(pid: number): number | null {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const kilobytes = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  return kilobytes === undefined ? null : Number(kilobytes) * 1024;
}

/** The TCP ports the given processes listen on, from their sockets and /proc/net/tcp{,6}. */
export function listeningPorts(pids: number[]): number[] {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // ended meanwhile
    }
    for (const fd of fds) {
      try {
        const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (socket) inodes.add(socket[1]);
      } catch {
        // closed meanwhile
      }
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').trim().split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // st 0A is LISTEN; the local address ends in :<port in hex>.
      if (fields[3] === '0A' && inodes.has(fields[9])) ports.add(parseInt(fields[1].split(':')[1], 16));
    }
  }
  return [...ports];
}
