import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real small file system for the disk tests: a tmpfs mounted on a fresh directory (root only),
 * filled with a filler file and freed again, remounted read-only and read-write. Where it cannot
 * be mounted (not root, no CAP_SYS_ADMIN, not Linux), {@link mountTmpfs} says why in one line and
 * the tests skip.
 */
export interface Tmpfs {
  /** The mount point. */
  dir: string;
  /** Writes a filler file until the file system refuses a byte more. */
  fill(): void;
  /** Removes the filler file. */
  free(): void;
  /** `mount -o remount,ro` (retried while a write holds the mount busy). */
  readOnly(): Promise<void>;
  readWrite(): void;
  /** Unmounts (lazily, if busy) and removes the mount point; safe to call twice. */
  unmount(): void;
}

const mount = (...args: string[]) => execFileSync('mount', args, { stdio: 'pipe' });

/** Mounts a tmpfs of `sizeBytes`; a string says why it cannot. */
export function mountTmpfs(sizeBytes: number): Tmpfs | string {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  if (process.getuid?.() !== 0) return 'not root: mounting a tmpfs needs root (run the tests as root, or in a container with CAP_SYS_ADMIN)';
  const dir = mkdtempSync(join(tmpdir(), 'la-tmpfs-'));
  try {
    mount('-t', 'tmpfs', '-o', `size=${sizeBytes},mode=0700`, 'tmpfs', dir);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return `mount -t tmpfs failed: ${stderr || (error as Error).message}`;
  }
  const filler = join(dir, 'filler');
  let mounted = true;
  return {
    dir,
    fill() {
      const fd = openSync(filler, 'a');
      try {
        for (const size of [65_536, 4_096, 1]) {
          const chunk = Buffer.alloc(size, 1);
          for (;;) {
            try {
              writeSync(fd, chunk);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
              throw error;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    free() {
      unlinkSync(filler);
    },
    async readOnly() {
      for (let attempt = 1; ; attempt += 1) {
        try {
          mount('-o', 'remount,ro', dir);
          return;
        } catch (error) {
          // A write in flight holds the mount busy for a moment.
          if (attempt >= 100) throw error;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    },
    readWrite() {
      mount('-o', 'remount,rw', dir);
    },
    unmount() {
      if (!mounted) return;
      mounted = false;
      try {
        execFileSync('umount', [dir], { stdio: 'pipe' });
      } catch {
        execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
