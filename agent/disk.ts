// Free space where the agent keeps its devices (its data directory's file system): read at every
// listing; below `lowBelowGiB` the agent makes no device and deletes its idle ones first.
import { statfs } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Free bytes for an unprivileged user on the file system holding `path` (or its nearest parent). */
export async function readFreeBytes(path: string): Promise<number> {
  let current = path;
  for (;;) {
    try {
      const stats = await statfs(current);
      return stats.bavail * stats.bsize;
    } catch (error) {
      const parent = dirname(current);
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === current) throw error;
      current = parent;
    }
  }
}

export interface DiskStatus {
  freeGiB: number;
  lowBelowGiB: number;
  low: boolean;
}

const GIB = 1024 ** 3;

export class DiskWatch {
  #status: DiskStatus | undefined;

  constructor(
    private readonly path: string,
    private readonly lowBelowGiB: number,
    private readonly read: (path: string) => Promise<number> = readFreeBytes,
  ) {}

  /** The last reading; undefined before the first or when it cannot be read (never low then). */
  get status(): DiskStatus | undefined {
    return this.#status;
  }

  get low(): boolean {
    return this.#status?.low ?? false;
  }

  /** Reads the free space; answers whether the reading changed what the view shows. */
  async check(): Promise<boolean> {
    const before = JSON.stringify(this.#status);
    try {
      const bytes = await this.read(this.path);
      this.#status = {
        // Whole GiB, rounded down: the view changes when a GiB does, not with every file written.
        freeGiB: Math.max(0, Math.floor(bytes / GIB)),
        lowBelowGiB: this.lowBelowGiB,
        low: bytes < this.lowBelowGiB * GIB,
      };
    } catch {
      this.#status = undefined;
    }
    return JSON.stringify(this.#status) !== before;
  }
}
