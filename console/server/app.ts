// The console's HTTP surface: the built web page, login, the event stream, and the actions. Every
// /api call names its person (session cookie, or a bearer token in token mode) and fails with
// `{"error":{code,message}}` otherwise. POSTs need the header x-simlock-console (a web page of
// another site cannot send it without asking first), and the cookie is SameSite=Strict.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import { SimlockError } from '../../api/index.js';
import { sendError, type Logger } from '../../runtime/index.js';
import { FocusBody } from '../model/wire.js';
import {
  asSimlockError,
  httpStatusOf,
  release,
  screenshot,
  setDrained,
  unquarantine,
} from './actions.js';
import { SESSION_COOKIE, type Person, type Sessions } from './sessions.js';
import type { ConsoleStore } from './store.js';
import { Subscriber } from './stream.js';
import { readUsage } from './usage.js';

export interface AppOptions {
  store: ConsoleStore;
  sessions: Sessions;
  log: Logger;
  webRoot: string;
  /** The exec proxy's URL, found when first needed. */
  proxyUrl: () => Promise<string>;
  /** Local mode: the Host headers we answer (DNS rebinding would bring another). */
  allowedHosts?: () => string[];
  secureCookies: boolean;
  /** Where the controller publishes its usage history (--simlock-namespace). */
  simlockNamespace: string;
}

const LoginBody = z.object({ token: z.string().min(1).max(16_384) });
const objectName = z.string().min(1).max(253);

type Handler = (req: Request, res: Response, person: Person) => Promise<void>;

function fail(res: Response, error: unknown): void {
  const failure = asSimlockError(error);
  sendError(res, failure.code, failure.message, failure.details, httpStatusOf(failure));
}

export function createConsoleApp(options: AppOptions): express.Express {
  const { sessions, store, log } = options;
  const subscribers = new Map<string, { subscriber: Subscriber; person: Person }>();
  const app = express();
  app.disable('x-powered-by');

  app.use((req, res, next) => {
    const hosts = options.allowedHosts?.();
    if (hosts && !hosts.includes(req.headers.host ?? '')) {
      return sendError(res, 'FORBIDDEN', 'this console answers only on its own address', {}, 421);
    }
    res.setHeader(
      'content-security-policy',
      "default-src 'self'; img-src 'self' blob: data:; connect-src 'self' blob:; style-src 'self'; frame-ancestors 'none'",
    );
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    next();
  });
  app.get('/healthz', (_req, res) => void res.type('text').send('ok'));

  const cookie = (res: Response, id: string) =>
    res.cookie(SESSION_COOKIE, id, {
      httpOnly: true,
      sameSite: 'strict',
      secure: options.secureCookies,
      path: '/',
    });

  app.get('/login', (req, res) => {
    const key = typeof req.query.key === 'string' ? req.query.key : '';
    void sessions
      .localLogin(key)
      .then((id) => {
        if (!id) return sendError(res, 'UNAUTHENTICATED', 'open the URL the console printed');
        cookie(res, id);
        res.redirect(303, '/');
      })
      .catch((error: unknown) => fail(res, error));
  });

  app.use('/api', (req, res, next) => {
    if (req.method === 'POST' && req.headers['x-simlock-console'] !== '1') {
      return sendError(res, 'FORBIDDEN', 'POSTs to the console need the x-simlock-console header');
    }
    next();
  });
  app.post('/api/login', express.json({ limit: 32_768 }), (req, res) => {
    const body = LoginBody.safeParse(req.body);
    if (sessions.mode !== 'token')
      return sendError(res, 'INVALID_REQUEST', 'this console uses its kubeconfig; no login');
    if (!body.success) return sendError(res, 'UNAUTHENTICATED', 'a bearer token is required');
    void sessions
      .tokenLogin(body.data.token)
      .then((id) => {
        if (!id) return sendError(res, 'UNAUTHENTICATED', 'the token was not accepted');
        cookie(res, id);
        res.json({ ok: true });
      })
      .catch((error: unknown) => fail(res, error));
  });
  app.post('/api/logout', (req, res) => {
    sessions.logout(req);
    res.clearCookie(SESSION_COOKIE, { path: '/' });
    res.json({ ok: true });
  });

  const personal =
    (handler: Handler) =>
    (req: Request, res: Response): void => {
      void (async () => {
        const person = await sessions.personOf(req);
        if (!person) {
          res.setHeader('x-simlock-mode', sessions.mode);
          return sendError(
            res,
            'UNAUTHENTICATED',
            sessions.mode === 'token'
              ? 'log in with a bearer token'
              : 'open the URL the console printed',
            { mode: sessions.mode },
          );
        }
        await handler(req, res, person);
      })().catch((error: unknown) => {
        if (!(error instanceof SimlockError)) log.warn('console call failed', { error });
        fail(res, error);
      });
    };

  app.get(
    '/api/session',
    personal(async (_req, res, person) => {
      res.json(await person.access.abilities(store.namespaces()));
    }),
  );

  app.get(
    '/api/stream',
    personal(async (_req, res, person) => {
      const subscriber = new Subscriber(store, person.access, res);
      subscribers.set(subscriber.id, { subscriber, person });
      res.on('close', () => subscribers.delete(subscriber.id));
      await subscriber.start();
    }),
  );

  app.post(
    '/api/stream/:id/focus',
    express.json({ limit: 65_536 }),
    personal((req, res, person) => {
      const entry = subscribers.get(String(req.params.id));
      const body = FocusBody.safeParse(req.body);
      if (!entry || entry.person !== person) throw new SimlockError('NOT_FOUND', 'no such stream');
      if (!body.success) throw new SimlockError('INVALID_REQUEST', 'focus: a list of keys');
      entry.subscriber.setFocus(body.data.requests, body.data.events);
      res.json({ ok: true });
      return Promise.resolve();
    }),
  );

  const drain = (drained: boolean) =>
    personal(async (req, res, person) => {
      const name = objectName.parse(req.params.name);
      await setDrained(person, name, drained);
      res.json({ ok: true });
    });
  app.post('/api/workers/:name/drain', drain(true));
  app.post('/api/workers/:name/undrain', drain(false));
  app.post(
    '/api/workers/:name/devices/:device/unquarantine',
    personal(async (req, res, person) => {
      const device = z.string().min(1).max(128).parse(req.params.device);
      await unquarantine(person, objectName.parse(req.params.name), device);
      res.json({ ok: true });
    }),
  );

  app.post(
    '/api/namespaces/:namespace/requests/:name/release',
    personal(async (req, res, person) => {
      await release(
        person,
        objectName.parse(req.params.namespace),
        objectName.parse(req.params.name),
      );
      res.json({ ok: true });
    }),
  );

  app.get(
    '/api/namespaces/:namespace/leases/:name/screenshot',
    personal(async (req, res, person) => {
      const namespace = objectName.parse(req.params.namespace);
      const name = objectName.parse(req.params.name);
      const png = await screenshot(person, await options.proxyUrl(), namespace, name);
      res.setHeader('cache-control', 'no-store');
      res.type('image/png').send(png);
    }),
  );

  app.get(
    '/api/usage',
    personal(async (_req, res, person) => {
      const usage = await readUsage(person, options.simlockNamespace);
      res.setHeader('cache-control', 'no-store');
      res.json(usage);
    }),
  );

  app.use('/api', (_req, res) => sendError(res, 'NOT_FOUND', 'no such console call'));

  // The page: built files, and index.html for the pages' own paths (/fleet, /requests/…).
  app.use(express.static(options.webRoot, { index: false, maxAge: '1h' }));
  app.get(/^\/(?!api\/).*/, (_req, res) => {
    const index = join(options.webRoot, 'index.html');
    if (!existsSync(index)) {
      res.status(503).type('text').send('the console page is not built: run npm run build:console');
      return;
    }
    res.setHeader('cache-control', 'no-cache');
    res.sendFile(index);
  });

  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (error as { status?: number }).status;
    if (status === 400 || status === 413)
      return sendError(res, 'INVALID_REQUEST', 'the body is not valid JSON or too large');
    fail(res, error);
  });
  return app;
}
