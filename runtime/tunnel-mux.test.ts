import { createServer, request } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  FRAME,
  TunnelClosedError,
  TunnelMux,
  WINDOW_BYTES,
  decodeFrame,
  encodeFrame,
  type TunnelStream,
} from './tunnel-mux.js';

/** Two sides joined as a WebSocket would join them: each message delivered whole, later. */
function pair(onStream?: (stream: TunnelStream) => void) {
  const sent = { opener: 0, acceptor: 0 };
  const sides: { acceptor?: TunnelMux } = {};
  const opener = new TunnelMux(
    (frame) => {
      sent.opener += frame.length;
      setImmediate(() => sides.acceptor?.receive(frame));
    },
    { side: 'opener' },
  );
  const acceptor = new TunnelMux(
    (frame) => {
      sent.acceptor += frame.length;
      setImmediate(() => opener.receive(frame));
    },
    { side: 'acceptor', ...(onStream ? { onStream } : {}) },
  );
  sides.acceptor = acceptor;
  return { opener, acceptor, sent };
}

/**
 * Everything a stream receives until its end. With events, not `for await`: an async iterator
 * destroys the stream when the reading ends (on Node 22 the writable side too), and the echo
 * still has to answer.
 */
function readAll(stream: TunnelStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('end', () => resolve(Buffer.concat(chunks).toString()));
    stream.once('error', reject);
  });
}

describe('tunnel frames', () => {
  it('round-trips kind, stream id and payload; a message too short is no frame', () => {
    const frame = decodeFrame(encodeFrame(FRAME.data, 0xfffffffe, Buffer.from('hello')));
    expect(frame?.kind).toBe(FRAME.data);
    expect(frame?.stream).toBe(0xfffffffe);
    expect(frame?.payload.toString()).toBe('hello');
    expect(decodeFrame(Buffer.from([1, 0]))).toBeUndefined();
  });
});

describe('TunnelMux', () => {
  it('carries several streams at once, each its own bytes, each ended on its own', async () => {
    const { opener } = pair((stream) => {
      // An echo that says which stream it is.
      void readAll(stream).then((text) => stream.end(`${stream.id}:${text.toUpperCase()}`));
    });
    const streams = [opener.open(), opener.open(), opener.open()];
    streams.forEach((stream, index) => stream.end(`call ${index}`));
    const answers = await Promise.all(streams.map(readAll));
    expect(answers).toEqual(['1:CALL 0', '3:CALL 1', '5:CALL 2']);
  });

  it('stops a writer whose reader does not read after one window, and lets it go on when read', async () => {
    let accepted: TunnelStream | undefined;
    const { opener, sent } = pair((stream) => (accepted = stream));
    const stream = opener.open();
    const big = Buffer.alloc(WINDOW_BYTES * 4, 7);
    let written = false;
    stream.write(big, () => (written = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Only a window's worth (and a reader's buffer) crossed; the write waits.
    expect(sent.opener).toBeLessThan(WINDOW_BYTES + 64 * 1024);
    expect(written).toBe(false);
    stream.end();
    const received = await readAll(accepted as TunnelStream);
    expect(received.length).toBe(big.length);
    expect(written).toBe(true);
  });

  it('ends the streams with TunnelClosedError when the connection goes, and opens no more', async () => {
    const { opener, acceptor } = pair(() => undefined);
    const stream = opener.open();
    const failed = new Promise<Error>((resolve) => stream.once('error', resolve));
    opener.close();
    acceptor.close();
    const error = await failed;
    expect(error).toBeInstanceOf(TunnelClosedError);
    expect(() => opener.open()).toThrow(TunnelClosedError);
  });

  it('resets the other half when one side destroys its stream', async () => {
    let accepted: TunnelStream | undefined;
    const { opener } = pair((stream) => (accepted = stream));
    const stream = opener.open();
    stream.write('x');
    await new Promise((resolve) => setTimeout(resolve, 10));
    const errors: Error[] = [];
    (accepted as TunnelStream).on('error', (error) => errors.push(error));
    const closed = new Promise((resolve) => (accepted as TunnelStream).once('close', resolve));
    stream.destroy();
    await closed;
    expect(errors[0]).toBeInstanceOf(TunnelClosedError);
  });

  it('carries HTTP: a request made over a stream is answered by an http.Server given that stream', async () => {
    const server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      req.pipe(res);
    });
    const { opener } = pair((stream) => server.emit('connection', stream));
    const answer = await new Promise<string>((resolve, reject) => {
      const req = request(
        {
          method: 'POST',
          path: '/v1/exec',
          host: 'agent',
          createConnection: () => opener.open(),
        },
        (res) => {
          res.setEncoding('utf8');
          let text = '';
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve(`${res.statusCode} ${text}`));
        },
      );
      req.on('error', reject);
      req.end('streamed body');
    });
    expect(answer).toBe('200 streamed body');
    server.close();
  });
});
