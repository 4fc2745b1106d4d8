// Who is looking. Run locally there is one person, the kubeconfig's, admitted by the secret key
// in the URL the command printed (so other local programs and web pages cannot use the console).
// In the cluster each person logs in with a bearer token: TokenReview says who it is, reads are
// checked with SubjectAccessReviews about them, and actions are sent on with their own token.
// Sessions are a random id in an HttpOnly cookie; the token stays in the server's memory.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import {
  bearerToken,
  clientWithToken,
  kubeconfigBearerToken,
  reviewToken,
  selfMay,
  subjectMay,
  type KubeClient,
} from '../../runtime/index.js';
import { Access } from './access.js';

export const SESSION_COOKIE = 'simlock_console';
const SESSION_TTL_MS = 8 * 3600_000;
/** A token given on each call (no cookie) is reviewed again after this long. */
const BEARER_TTL_MS = 60_000;
const MAX_SESSIONS = 10_000;

export interface Person {
  user: string;
  access: Access;
  /** Speaks to the API server as this person: actions are refused or allowed by it. */
  client: KubeClient;
  /** The person's bearer token, for the exec proxy (undefined: their kubeconfig has none). */
  token: string | undefined;
  expiresAt: number;
}

const SelfSubjectReview = z.object({
  status: z.object({ userInfo: z.object({ username: z.string().max(1024) }) }),
});

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export class Sessions {
  private readonly sessions = new Map<string, Person>();
  private readonly bearers = new Map<string, Promise<Person | undefined>>();
  /** The secret of the URL a local console prints. */
  readonly localKey = randomBytes(18).toString('base64url');

  constructor(
    readonly mode: 'local' | 'token',
    private readonly client: KubeClient,
  ) {}

  /** Local mode: the person of the kubeconfig, when the URL's key is right; answers a session. */
  async localLogin(key: string): Promise<string | undefined> {
    if (this.mode !== 'local' || !sameSecret(key, this.localKey)) return undefined;
    let user = this.client.user;
    try {
      const answer = SelfSubjectReview.safeParse(
        await this.client.create('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'SelfSubjectReview',
        }),
      );
      if (answer.success) user = answer.data.status.userInfo.username;
    } catch {
      // Older API servers have no SelfSubjectReview: the kubeconfig's user name will do.
    }
    const token = process.env.SIMLOCK_TOKEN ?? (await kubeconfigBearerToken(this.client));
    return this.add({
      user,
      access: new Access(user, 'local', (attributes) => selfMay(this.client, attributes)),
      client: this.client,
      token,
      expiresAt: Date.now() + SESSION_TTL_MS,
    });
  }

  /** Token mode: a session for the person behind `token`, or undefined when it is not accepted. */
  async tokenLogin(token: string): Promise<string | undefined> {
    const person = await this.personOfToken(token);
    return person ? this.add(person) : undefined;
  }

  /** The person of a request: its session cookie, or (token mode) its bearer token. */
  async personOf(req: IncomingMessage): Promise<Person | undefined> {
    const id = cookieValue(req.headers.cookie, SESSION_COOKIE);
    const session = id ? this.sessions.get(id) : undefined;
    if (session && session.expiresAt > Date.now()) return session;
    if (session && id) this.sessions.delete(id);
    const token = this.mode === 'token' ? bearerToken(req.headers.authorization) : undefined;
    if (!token) return undefined;
    const digest = createHash('sha256').update(token).digest('base64url');
    let person = this.bearers.get(digest);
    if (!person) {
      person = this.personOfToken(token, BEARER_TTL_MS).catch(() => undefined);
      this.bearers.set(digest, person);
      setTimeout(() => this.bearers.delete(digest), BEARER_TTL_MS).unref();
    }
    return person;
  }

  logout(req: IncomingMessage): void {
    const id = cookieValue(req.headers.cookie, SESSION_COOKIE);
    if (id) this.sessions.delete(id);
  }

  private async personOfToken(token: string, ttlMs = SESSION_TTL_MS): Promise<Person | undefined> {
    if (this.mode !== 'token') return undefined;
    const caller = await reviewToken(this.client, token);
    if (!caller) return undefined;
    return {
      user: caller.username,
      access: new Access(caller.username, 'token', (attributes) =>
        subjectMay(this.client, caller, attributes),
      ),
      client: clientWithToken(this.client, token),
      token,
      expiresAt: Date.now() + ttlMs,
    };
  }

  private add(person: Person): string {
    const now = Date.now();
    if (this.sessions.size >= MAX_SESSIONS) {
      for (const [id, session] of this.sessions)
        if (session.expiresAt <= now) this.sessions.delete(id);
      const oldest = this.sessions.keys().next();
      if (this.sessions.size >= MAX_SESSIONS && !oldest.done) this.sessions.delete(oldest.value);
    }
    const id = randomBytes(24).toString('base64url');
    this.sessions.set(id, person);
    return id;
  }
}
