// Byte streams multiplexed over one message connection (the agent's tunnel to the exec proxy,
// ADR 0024). The proxy opens a stream per exec and speaks plain HTTP over it; the agent hands each
// stream to its own HTTP server. Each frame is one message: kind (1 byte), stream id (4 bytes, big
// endian), payload. Every stream has its own send window: a reader that stops reading stops its
// writer after WINDOW_BYTES, and the other streams of the tunnel go on (the exec's backpressure,
// as over a connection of its own).
import { Duplex } from 'node:stream';

export const FRAME = { open: 1, data: 2, end: 3, reset: 4, window: 5 } as const;
type FrameKind = (typeof FRAME)[keyof typeof FRAME];

/** Bytes a stream may have in flight before its reader gives credit back. */
export const WINDOW_BYTES = 256 * 1024;
/** The largest payload of one data frame. */
export const MAX_CHUNK_BYTES = 64 * 1024;
const HEADER_BYTES = 5;

/** How a mux sends a frame: one message of the connection beneath. */
export type TunnelSend = (frame: Buffer) => void;

export function encodeFrame(kind: FrameKind, stream: number, payload?: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(HEADER_BYTES + (payload?.length ?? 0));
  frame.writeUInt8(kind, 0);
  frame.writeUInt32BE(stream, 1);
  if (payload) frame.set(payload, HEADER_BYTES);
  return frame;
}

export function decodeFrame(
  frame: Buffer,
): { kind: number; stream: number; payload: Buffer } | undefined {
  if (frame.length < HEADER_BYTES) return undefined;
  return {
    kind: frame.readUInt8(0),
    stream: frame.readUInt32BE(1),
    payload: frame.subarray(HEADER_BYTES),
  };
}

/** The tunnel went away under a stream (its connection closed or was cut). */
export class TunnelClosedError extends Error {
  constructor(message = 'the tunnel closed') {
    super(message);
    this.name = 'TunnelClosedError';
  }
}

export interface TunnelMuxOptions {
  /** Which ids this side opens (odd or even): the two sides never pick the same one. */
  side: 'opener' | 'acceptor';
  /** A stream the other side opened. None: such streams are refused. */
  onStream?: (stream: TunnelStream) => void;
}

/** One side of a tunnel: open streams, and feed it every message that arrives. */
export class TunnelMux {
  private readonly streams = new Map<number, TunnelStream>();
  private nextId: number;
  private closedWith: Error | undefined;

  constructor(
    private readonly send: TunnelSend,
    private readonly options: TunnelMuxOptions,
  ) {
    this.nextId = options.side === 'opener' ? 1 : 2;
  }

  get openStreams(): number {
    return this.streams.size;
  }

  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  open(): TunnelStream {
    if (this.closedWith) throw this.closedWith;
    const id = this.nextId;
    this.nextId = (this.nextId + 2) % 0x1_0000_0000 || (this.options.side === 'opener' ? 1 : 2);
    const stream = new TunnelStream(this, id);
    this.streams.set(id, stream);
    this.send(encodeFrame(FRAME.open, id));
    return stream;
  }

  /** A message from the other side. */
  receive(message: Buffer): void {
    const frame = decodeFrame(message);
    if (!frame || this.closedWith) return;
    const stream = this.streams.get(frame.stream);
    switch (frame.kind) {
      case FRAME.open: {
        if (stream) return;
        if (!this.options.onStream) {
          this.send(encodeFrame(FRAME.reset, frame.stream));
          return;
        }
        const opened = new TunnelStream(this, frame.stream);
        this.streams.set(frame.stream, opened);
        this.options.onStream(opened);
        return;
      }
      case FRAME.data:
        stream?.remoteData(frame.payload);
        return;
      case FRAME.end:
        stream?.push(null);
        return;
      case FRAME.reset:
        stream?.remoteReset();
        return;
      case FRAME.window:
        if (frame.payload.length >= 4) stream?.credit(frame.payload.readUInt32BE(0));
        return;
    }
  }

  /** The connection beneath is gone: every stream ends with `error`. */
  close(error: Error = new TunnelClosedError()): void {
    if (this.closedWith) return;
    this.closedWith = error;
    for (const stream of [...this.streams.values()]) stream.destroy(error);
    this.streams.clear();
  }

  /** @internal */
  frame(kind: FrameKind, stream: number, payload?: Uint8Array): void {
    if (!this.closedWith) this.send(encodeFrame(kind, stream, payload));
  }

  /** @internal */
  forget(stream: number): void {
    this.streams.delete(stream);
  }
}

/**
 * One stream of a tunnel, as a Duplex that passes for a socket (node:http calls a few socket
 * methods on what it is given).
 */
export class TunnelStream extends Duplex {
  private sendCredit = WINDOW_BYTES;
  private receiveAllowance = WINDOW_BYTES;
  private unacknowledged = 0;
  private waitingForCredit: (() => void) | undefined;
  private reset = false;
  private ended = false;

  constructor(
    private readonly mux: TunnelMux,
    readonly id: number,
  ) {
    super({ allowHalfOpen: true });
  }

  override _write(
    chunk: Buffer,
    _encoding: BufferEncoding,
    done: (error?: Error | null) => void,
  ): void {
    void this.writeInWindow(chunk).then(
      () => done(),
      (error: unknown) => done(error as Error),
    );
  }

  private async writeInWindow(chunk: Buffer): Promise<void> {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.destroyed) throw new TunnelClosedError('the stream was closed');
      if (this.sendCredit <= 0) {
        await new Promise<void>((resolve) => (this.waitingForCredit = resolve));
        continue;
      }
      const size = Math.min(chunk.length - offset, this.sendCredit, MAX_CHUNK_BYTES);
      this.mux.frame(FRAME.data, this.id, chunk.subarray(offset, offset + size));
      this.sendCredit -= size;
      offset += size;
    }
  }

  override _final(done: (error?: Error | null) => void): void {
    this.ended = true;
    this.mux.frame(FRAME.end, this.id);
    done();
  }

  override _read(): void {
    if (this.unacknowledged === 0) return;
    const window = Buffer.allocUnsafe(4);
    window.writeUInt32BE(this.unacknowledged, 0);
    this.receiveAllowance += this.unacknowledged;
    this.unacknowledged = 0;
    this.mux.frame(FRAME.window, this.id, window);
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    // Gone before both sides ended: the other side's half goes too.
    if (!this.reset && !(this.ended && this.readableEnded)) this.mux.frame(FRAME.reset, this.id);
    this.mux.forget(this.id);
    this.waitingForCredit?.();
    done(error);
  }

  /** @internal */
  remoteData(payload: Buffer): void {
    if (payload.length > this.receiveAllowance) {
      // The other side wrote past its window: a broken peer, not a slow reader.
      this.destroy(new Error('the tunnel peer overran its window'));
      return;
    }
    this.receiveAllowance -= payload.length;
    this.unacknowledged += payload.length;
    this.push(payload);
  }

  /** @internal */
  remoteReset(): void {
    this.reset = true;
    this.destroy(new TunnelClosedError('the other side reset the stream'));
  }

  /** @internal */
  credit(bytes: number): void {
    this.sendCredit += bytes;
    const waiting = this.waitingForCredit;
    this.waitingForCredit = undefined;
    waiting?.();
  }

  // What node:http calls on a socket; a stream of a tunnel has no such settings.
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  setTimeout(_ms: number, callback?: () => void): this {
    if (callback) this.once('timeout', callback);
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}
