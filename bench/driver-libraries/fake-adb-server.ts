// A stand-in for the adb server's TCP side, for @devicefarmer/adbkit (which speaks to the server
// itself instead of running `adb`). It answers the smart-socket protocol as adb's SERVICES.TXT and
// protocol.txt describe it: a request is four hex digits of length and the text; an answer is
// OKAY or FAIL, then four hex digits of length and the value. It serves host:version, host:devices,
// host:devices-l (from a recorded `adb devices -l`, whose lines after the header are the server's
// reply to host:devices-l), host:transport:<serial> and, on that connection, shell:getprop (the
// shell's output raw, then the connection closes). Everything else gets FAIL. It counts
// connections and requests, so a measurement can say what one listing cost.
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface FakeAdbServerOptions {
  /** A recorded `adb devices -l`, header included. */
  devicesL: string;
  /** `getprop` output per serial, in its `[key]: [value]` lines. */
  getprop: Record<string, string>;
  /** What host:version answers: adb 1.0.41 answers 0x29. */
  version?: number;
}

interface Row {
  serial: string;
  state: string;
}

function frame(value: string): Buffer {
  const body = Buffer.from(value, 'utf8');
  return Buffer.concat([Buffer.from(body.length.toString(16).padStart(4, '0')), body]);
}

function okay(value: string): Buffer {
  return Buffer.concat([Buffer.from('OKAY'), frame(value)]);
}

function fail(message: string): Buffer {
  return Buffer.concat([Buffer.from('FAIL'), frame(message)]);
}

export class FakeAdbServer {
  connections = 0;
  readonly requests: string[] = [];
  readonly #server: Server;
  readonly #longListing: string;
  readonly #rows: Row[];

  private constructor(private readonly options: FakeAdbServerOptions) {
    const lines = options.devicesL
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('List of devices'));
    this.#longListing = lines.map((line) => `${line}\n`).join('');
    this.#rows = lines.map((line) => {
      const [serial = '', state = ''] = line.trim().split(/\s+/);
      return { serial, state };
    });
    this.#server = createServer((socket) => this.#serve(socket));
  }

  static async start(options: FakeAdbServerOptions): Promise<FakeAdbServer> {
    const server = new FakeAdbServer(options);
    await new Promise<void>((resolve, reject) => {
      server.#server.once('error', reject);
      server.#server.listen(0, '127.0.0.1', resolve);
    });
    return server;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  resetCounts(): void {
    this.connections = 0;
    this.requests.length = 0;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #serve(socket: Socket): void {
    this.connections++;
    let pending = Buffer.alloc(0);
    let transport: string | undefined;
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4) {
        const length = Number.parseInt(pending.subarray(0, 4).toString('ascii'), 16);
        if (Number.isNaN(length)) {
          socket.end(fail('bad request length'));
          return;
        }
        if (pending.length < 4 + length) return;
        const request = pending.subarray(4, 4 + length).toString('utf8');
        pending = pending.subarray(4 + length);
        this.requests.push(request);
        transport = this.#answer(socket, request, transport);
      }
    });
  }

  /** Answers one request; returns the serial the connection is switched to, if any. */
  #answer(socket: Socket, request: string, transport: string | undefined): string | undefined {
    if (transport !== undefined) {
      const output = request === 'shell:getprop' ? this.options.getprop[transport] : undefined;
      if (output === undefined) socket.end(fail(`closed: ${request} is not served here`));
      else socket.end(Buffer.concat([Buffer.from('OKAY'), Buffer.from(output)]));
      return undefined;
    }
    if (request === 'host:version') {
      socket.end(okay((this.options.version ?? 0x29).toString(16).padStart(4, '0')));
    } else if (request === 'host:devices') {
      socket.end(okay(this.#rows.map((row) => `${row.serial}\t${row.state}\n`).join('')));
    } else if (request === 'host:devices-l') {
      socket.end(okay(this.#longListing));
    } else if (request.startsWith('host:transport:')) {
      const serial = request.slice('host:transport:'.length);
      const row = this.#rows.find((candidate) => candidate.serial === serial);
      if (row === undefined) socket.end(fail(`device '${serial}' not found`));
      else if (row.state !== 'device') socket.end(fail(`device ${row.state}`));
      else {
        socket.write('OKAY');
        return serial;
      }
    } else {
      socket.end(fail(`unknown host service ${request}`));
    }
    return undefined;
  }
}
