// The record of the simulators the agent created in the user's default device set
// (`simctl.deviceSet: default-recorded`): `<dataDir>/simctl-created.json`. The record, not a
// device's name, decides what is the agent's there, so it is written the moment `simctl create`
// returns, atomically (a temporary file renamed over the old one), and read again on start.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { DriverError } from '../driver.js';

export const CREATED_RECORD_FILE = 'simctl-created.json';

const CreatedEntry = z.object({
  udid: z.string().min(1).max(128),
  name: z.string().max(128),
  createdAt: z.string().max(64),
});
export type CreatedEntry = z.infer<typeof CreatedEntry>;

const CreatedFile = z.object({
  version: z.literal(1),
  created: z.array(CreatedEntry).max(100_000),
});

export class CreatedRecord {
  readonly path: string;
  #entries: Promise<Map<string, CreatedEntry>> | undefined;
  /** Writes one after another, so two creates at once both land in the file. */
  #writing: Promise<void> = Promise.resolve();

  constructor(dataDir: string) {
    this.path = join(dataDir, CREATED_RECORD_FILE);
  }

  /** The UDIDs recorded (read from the file once, then kept). */
  async udids(): Promise<Set<string>> {
    return new Set((await this.#load()).keys());
  }

  /** Records a UDID; when the file cannot be written, the UDID is not recorded in memory either. */
  async add(entry: CreatedEntry): Promise<void> {
    const entries = await this.#load();
    entries.set(entry.udid, entry);
    try {
      await this.#write(entries);
    } catch (error) {
      entries.delete(entry.udid);
      throw error;
    }
  }

  /** Forgets a UDID (after its simulator was deleted). */
  async remove(udid: string): Promise<void> {
    const entries = await this.#load();
    if (!entries.delete(udid)) return;
    await this.#write(entries);
  }

  #load(): Promise<Map<string, CreatedEntry>> {
    if (this.#entries === undefined) {
      const reading = this.#read();
      this.#entries = reading;
      // A file that could not be read is read again next time (an operator may have fixed it).
      reading.catch(() => {
        if (this.#entries === reading) this.#entries = undefined;
      });
    }
    return this.#entries;
  }

  async #read(): Promise<Map<string, CreatedEntry>> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
      throw new DriverError(`cannot read ${this.path}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    try {
      const file = CreatedFile.parse(JSON.parse(text));
      return new Map(file.created.map((entry) => [entry.udid, entry]));
    } catch (error) {
      // Never start over on an unreadable record: the devices it names would become strangers.
      throw new DriverError(
        `${this.path} is not a record of created simulators; fix or move it aside: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  #write(entries: Map<string, CreatedEntry>): Promise<void> {
    const text = `${JSON.stringify({ version: 1, created: [...entries.values()] }, null, 2)}\n`;
    const next = this.#writing.then(() => writeAtomically(this.path, text));
    this.#writing = next.catch(() => undefined);
    return next;
  }
}

async function writeAtomically(path: string, text: string): Promise<void> {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await mkdir(dirname(path), { recursive: true });
    const file = await open(temporary, 'w', 0o600);
    try {
      await file.writeFile(text);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw new DriverError(`cannot write ${path}: ${(error as Error).message}`, { cause: error });
  }
}
