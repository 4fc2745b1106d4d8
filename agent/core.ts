// The agent's core, without Kubernetes: one object that owns the inventory, the presence watcher,
// the granter, the local queue, health and the view, and runs their timers on the injected clock.
// The Kubernetes wiring (register the Worker, heartbeat, watch Leases, write Lease status) calls
// grant / reclaim / execArgv and subscribes to `views` (patch Worker status) and `expirations`.
// One meaning per word, as in the controller: a *grant* gives a device to a lease; a *reclaim*
// takes it back (erase or shut down a simulator, free a phone), which is how the agent carries out
// a lease's *release* (its holder let go, it expired, or the controller ended it).
import {
  leaseLostMessage,
  type DeviceSpec,
  type GrantedDevice,
  type WorkerStatus,
  type WorkerTunnel,
} from '../api/index.js';
import type { AgentConfig } from './config.js';
import type { Driver, ExecPlan } from './drivers/driver.js';
import {
  LeaseGranter,
  type GrantOutcome,
  type GrantStepListener,
  type ReclaimOutcome,
} from './granter.js';
import { Inventory } from './inventory.js';
import { DeviceSteps } from './device-steps.js';
import { silentLogger, type Clock, type Logger } from '../runtime/index.js';
import { AgentLimits } from './agent-limits.js';
import { Listeners } from './listeners.js';
import { LocalQueue, type LocalEntry, type LocalRequest } from './local-queue.js';
import { PresenceWatcher } from './presence.js';
import { LeaseExpiries } from './lease-expiries.js';
import { readMachine, type MachineFigures } from './machine-limits.js';
import type { DeviceRamSamplerOptions } from './model-ram.js';
import { DiskWatch } from './disk.js';
import { deviceCare } from './device-care.js';
import type { IdleSweeper } from './idle-sweeper.js';
import type { QuarantineRetrier, UnquarantineOutcome } from './quarantine-retrier.js';
import { RepeatingWork } from './repeating-work.js';
import { RunningExecs } from './running-execs.js';
import { StageTimings } from './stage-timings.js';
import { CrashRecovery } from './crash-recovery.js';
import { buildWorkerStatus, HealthTracker, ViewDiffer, type ViewChange } from './view.js';

export interface AgentCoreOptions {
  config: AgentConfig;
  driver: Driver;
  clock: Clock;
  logger?: Logger;
  agentVersion?: string;
  /** The host's cores and memory, for limits the config does not set (default: this machine's). */
  machine?: MachineFigures;
  /** How long making and booting took on this host before (kept across restarts). */
  stageTimings?: StageTimings;
  /** Where the agent keeps its devices (its data directory): its free space is watched. */
  dataDir?: string;
  /** Reads free bytes at a path (default: the file system's; tests give their own). */
  readFreeBytes?: (path: string) => Promise<number>;
  /** Measures the booted devices' RAM per model (ADR 0021); without it, the figures stay fixed. */
  deviceRam?: Omit<DeviceRamSamplerOptions, 'clock'>;
}

export interface LocalLeaseRequest extends LocalRequest {
  /** The lease ends (and its device is reclaimed) this long after the grant. */
  durationMs?: number;
}

export class AgentCore {
  /** The view, debounced, whenever it changed: patch the Worker status with it. */
  readonly views: Listeners<ViewChange>;
  /** A lease whose time ran out (grant's expiresAtMs, a local lease's duration); it is released. */
  readonly expirations = new Listeners<{ leaseId: string }>();

  readonly inventory: Inventory;
  /** The device machine's shell: every move of a simulator or emulator goes through it. */
  readonly steps: DeviceSteps;
  readonly presence: PresenceWatcher;
  readonly granter: LeaseGranter;
  readonly localQueue: LocalQueue;
  readonly health = new HealthTracker();
  /** The execs running on each lease: stopped when it ends, before its device is reclaimed. */
  readonly execs: RunningExecs;
  /** Leased devices that crash: booted again under the lease, or the lease lost (its `news`). */
  readonly recovery: CrashRecovery;

  readonly #config: AgentConfig;
  /** The tunnel to the exec proxy, as the tunnel client last said (none: no tunnel). */
  #tunnel: WorkerTunnel | undefined;
  /** The config's limits, or those derived from the machine and the devices' measured RAM. */
  readonly #limits: AgentLimits;
  readonly #driver: Driver;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #agentVersion: string | undefined;
  readonly #differ: ViewDiffer;
  readonly #disk: DiskWatch | undefined;
  readonly #sweeper: IdleSweeper;
  /** Tries quarantined devices again, and ends a quarantine an operator asks to end. */
  readonly quarantines: QuarantineRetrier;
  readonly #expiries: LeaseExpiries;
  /** The listing, the health check and the crash probe, each on its interval. */
  readonly #repeating: RepeatingWork;
  #provisionProblem: string | undefined;
  #running = false;

  constructor(options: AgentCoreOptions) {
    this.#config = options.config;
    this.#driver = options.driver;
    this.#clock = options.clock;
    this.#logger = options.logger ?? silentLogger;
    this.#limits = new AgentLimits({
      configured: this.#config.limits,
      machine: options.machine ?? readMachine(),
      platforms: () => this.#driver.platforms,
      clock: this.#clock,
      deviceRam: options.deviceRam,
      logger: this.#logger,
    });
    this.#agentVersion = options.agentVersion;
    this.#repeating = new RepeatingWork(this.#clock);
    this.#expiries = new LeaseExpiries(this.#clock, (leaseId) => {
      this.expirations.emit({ leaseId });
      void this.reclaim(leaseId);
    });

    this.inventory = new Inventory(this.#clock);
    this.steps = new DeviceSteps({
      inventory: this.inventory,
      driver: this.#driver,
      logger: this.#logger,
    });
    this.execs = new RunningExecs({ clock: this.#clock });
    this.presence = new PresenceWatcher({
      clock: this.#clock,
      probeIntervalMs: this.#config.probeIntervalMs,
      readPresence: (device) => this.#driver.readPresence(device),
      physicalDevices: () => this.inventory.physicalDevices(),
      logger: this.#logger,
    });
    const timings = options.stageTimings ?? new StageTimings();
    this.localQueue = new LocalQueue({
      clock: this.#clock,
      maxEntries: this.#config.localQueue.maxEntries,
    });
    this.granter = new LeaseGranter({
      driver: this.#driver,
      inventory: this.inventory,
      presence: this.presence,
      clock: this.#clock,
      limits: this.#limits.current,
      reclaim: this.#config.reclaim,
      capabilities: () => this.#capabilities(),
      localWaiting: () => this.localQueue.waitingSpecs(),
      timings,
      diskLow: () => this.#disk?.low ?? false,
      steps: this.steps,
      refusedForRoom: () => this.#differ.flush(),
      stopExecs: (leaseId) =>
        this.execs.stopLease(leaseId, leaseLostMessage(leaseId, 'its device is being reclaimed')),
      logger: this.#logger,
    });
    this.recovery = new CrashRecovery({
      driver: this.#driver,
      inventory: this.inventory,
      granter: this.granter,
      steps: this.steps,
      execs: this.execs,
      timings,
      clock: this.#clock,
      relist: () => this.steps.refresh(this.#driver),
      logger: this.#logger,
    });
    // A leased device the tools no longer list: its lease is lost (the machine's listedGone).
    this.steps.leaseLost.add(({ lease, effects }) => this.recovery.lost(lease, effects));
    this.#disk =
      options.dataDir === undefined
        ? undefined
        : new DiskWatch(options.dataDir, this.#config.disk.lowBelowGiB, options.readFreeBytes);
    // The moves of the device machine no lease is in (idle, quarantine).
    ({ sweeper: this.#sweeper, quarantines: this.quarantines } = deviceCare({
      config: this.#config,
      driver: this.#driver,
      inventory: this.inventory,
      steps: this.steps,
      granter: this.granter,
      clock: this.#clock,
      limits: this.#limits.current,
      logger: this.#logger,
      onReturned: () => this.#serveLocal(),
    }));
    const { viewDebounceMs: debounceMs, viewTakenDelayMs: takenDelayMs } = this.#config;
    this.#differ = new ViewDiffer({ clock: this.#clock, debounceMs, takenDelayMs });
    this.views = this.#differ.changes;

    this.inventory.changes.add(() => this.#publish());
    this.localQueue.changes.add(() => this.#publish());
    this.presence.changes.add(() => {
      this.#publish();
      // A device plugged back in may be what a local request waits for.
      this.#serveLocal();
    });
  }

  /** Reads the drivers, checks health, and starts the timers. */
  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    await Promise.all([this.refresh(), this.checkHealth()]);
    this.presence.start();
    this.quarantines.start();
    if (!this.#running) return; // stopped while the first listing ran
    const { refreshIntervalMs, healthIntervalMs, probeIntervalMs } = this.#config;
    this.#repeating.start([
      { name: 'refresh', intervalMs: refreshIntervalMs, run: () => this.refresh() },
      { name: 'health', intervalMs: healthIntervalMs, run: () => this.checkHealth() },
      // The per-device check of leased virtual devices (crash-recovery.ts).
      { name: 'probe', intervalMs: probeIntervalMs, run: () => this.recovery.probe() },
    ]);
  }

  stop(): void {
    this.#running = false;
    this.presence.stop();
    this.quarantines.stop();
    this.#differ.stop();
    this.#repeating.stop();
    this.#expiries.stop();
  }

  /** The view now, not debounced. */
  status(): WorkerStatus {
    return buildWorkerStatus({
      agentVersion: this.#agentVersion,
      endpoint: this.#config.endpoint,
      health: this.health.health,
      capabilities: this.#capabilities(),
      catalog: this.inventory.catalog,
      devices: this.inventory.devices((id) => this.presence.latest(id)),
      limits: this.#limits.current,
      limitsBasis: this.#limits.basis,
      ...(this.#disk?.status ? { disk: this.#disk.status } : {}),
      ...(this.#tunnel ? { tunnel: this.#tunnel } : {}),
      queue: {
        entries: this.localQueue.viewEntries(),
        queueDepth: this.localQueue.queueDepth,
        physicalQueueDepth: this.localQueue.physicalQueueDepth,
      },
    });
  }

  /** Answers a fleet Lease. With `expiresAtMs`, the lease is released when its time is up. */
  async grant(
    leaseId: string,
    spec: DeviceSpec,
    expiresAtMs?: number,
    onStep?: GrantStepListener,
  ): Promise<GrantOutcome> {
    const outcome = await this.granter.grant(leaseId, spec, 'fleet', onStep);
    if (outcome.kind === 'granted' && expiresAtMs !== undefined) {
      this.#expiries.expireAt(leaseId, expiresAtMs);
    }
    return outcome;
  }

  /** Holds again the device of a lease granted before a restart (see LeaseGranter.adopt). */
  async adopt(leaseId: string, device: GrantedDevice, expiresAtMs?: number): Promise<boolean> {
    const adopted = await this.granter.adopt(leaseId, device);
    if (adopted) this.#differ.prompt(); // the controller counted it only for a while (ADR 0029)
    if (adopted && expiresAtMs !== undefined) this.#expiries.expireAt(leaseId, expiresAtMs);
    return adopted;
  }

  /** Ends a lease (fleet or local) and reclaims its device; then local requests get a turn. */
  async reclaim(leaseId: string): Promise<ReclaimOutcome> {
    this.#expiries.clear(leaseId);
    // A device being booted again after a crash is reclaimed once that boot settles (the
    // machine's recovering → reclaiming row); a lease lost meanwhile has nothing to reclaim.
    if (this.recovery.recovering(leaseId)) await this.recovery.settled(leaseId);
    const outcome = await this.granter.reclaim(leaseId);
    this.recovery.forget(leaseId);
    this.#serveLocal();
    return outcome;
  }

  /** Queues a local request; its entry's `outcome` settles with the grant or the failure. */
  requestLocal(request: LocalLeaseRequest): LocalEntry {
    const entry = this.localQueue.enqueue(request);
    void entry.outcome.then((outcome) => {
      if (outcome.kind !== 'granted') return;
      this.#differ.prompt(); // the controller does not know a local grant: no wait (ADR 0029)
      if (request.durationMs !== undefined)
        this.#expiries.expireAt(request.id, this.#clock.now() + request.durationMs);
    });
    this.#serveLocal();
    return entry;
  }

  cancelLocal(id: string): boolean {
    return this.localQueue.cancel(id);
  }

  /** The argv to run a tool on a lease's device, or why not. */
  execArgv(leaseId: string, tool: string, args: readonly string[]): ExecPlan {
    return this.recovery.execRefusal(leaseId) ?? this.granter.execArgv(leaseId, tool, args);
  }

  /** Ends a quarantine begun before `askedAtMs` (an operator's spec.unquarantine entry). */
  unquarantine(deviceId: string, askedAtMs: number): Promise<UnquarantineOutcome> {
    return this.quarantines.unquarantine(deviceId, askedAtMs);
  }

  /** Forgets a physical device unplugged for good, so it no longer shows as absent. */
  forgetDevice(id: string): void {
    this.inventory.forget(id);
    this.presence.forget(id);
  }

  /** Lists the devices now (also done every refreshIntervalMs). */
  async refresh(): Promise<void> {
    try {
      await this.steps.refresh(this.#driver);
      this.health.recordListing();
      this.#noteProvisionProblem(this.inventory.provisionProblem);
      await this.#disk?.check();
    } catch (error) {
      this.health.recordListing((error as Error).message);
      this.#logger.warn('listing devices failed', { error: (error as Error).message });
    }
    this.#publish();
    this.#serveLocal();
    if (this.inventory.isRead) this.recovery.checkListing();
    await this.#sampleDeviceRam();
    if (this.#running && this.inventory.isRead) {
      await this.sweepIdle();
    }
  }

  /** Shuts down and deletes idle devices now (also done after every listing). */
  async sweepIdle(): Promise<void> {
    await this.#sweeper.sweep(this.#disk?.low ?? false);
  }

  /** Runs the driver's health check now (also done every healthIntervalMs). */
  async checkHealth(): Promise<void> {
    try {
      await this.#driver.checkHealth();
      this.health.recordCheck();
    } catch (error) {
      this.health.recordCheck((error as Error).message);
      this.#logger.warn('health check failed', { error: (error as Error).message });
    }
    this.#publish();
  }

  /** The tunnel connected or lost (cluster/tunnel-client.ts): said in the Worker status. */
  setTunnel(tunnel: WorkerTunnel): void {
    this.#tunnel = tunnel;
    this.#publish();
  }

  /** A fleet lease extended (its Lease's spec.expiresAt moved): its timer, if this agent holds it. */
  extend(leaseId: string, expiresAtMs: number): void {
    this.#expiries.extend(leaseId, expiresAtMs);
  }

  /** Emits the view now if it changed, without waiting for the debounce (e.g. at shutdown). */
  flushView(): void {
    this.#differ.flush();
  }

  /** Measures the booted devices' RAM (at most once a minute) and applies new medians. */
  async #sampleDeviceRam(): Promise<void> {
    if (!this.inventory.isRead) return;
    const devices = () => this.inventory.devices((id) => this.presence.latest(id));
    if (await this.#limits.sampleDeviceRam(devices)) this.#publish();
  }

  /** A host that cannot make devices says why, once when it starts and once when it ends. */
  #noteProvisionProblem(problem: string | undefined): void {
    if (problem === this.#provisionProblem) return;
    if (problem !== undefined) {
      this.#logger.warn('this host can make no devices', { reason: problem });
    } else if (this.#provisionProblem !== undefined) {
      this.#logger.info('this host can make devices again');
    }
    this.#provisionProblem = problem;
  }

  #capabilities(): { name: string; available: boolean }[] {
    return this.#config.capabilities.map((name) => ({ name, available: true }));
  }

  #publish(): void {
    this.#differ.offer(this.status());
  }

  #serveLocal(): void {
    if (this.localQueue.entries().length === 0) return;
    void this.localQueue.serve((request) => this.granter.grant(request.id, request.spec, 'local'));
  }
}
