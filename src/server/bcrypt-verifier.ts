// bcrypt verification on a worker thread, one at a time. bcryptjs is pure JavaScript: on the event loop a
// cost-10 check holds it ~75 ms, so a flood of wrong passwords delays every other request, cached
// scrapes included. On its own thread the event loop only passes messages, and one thread keeps wrong
// passwords to one core, as the exporter toolkit's mutex does.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// Inline (CommonJS, `eval`), so the same code runs from dist/ and from the TypeScript sources under test.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const bcrypt = require(workerData.bcryptjs);
// On Linux a nice value is per thread: pid 0 is this thread alone, so the event loop keeps its priority.
if (workerData.nice !== 0) { try { require('node:os').setPriority(0, workerData.nice); } catch {} }
parentPort.on('message', ({ id, password, hash, padSalts }) => {
  let ok = false;
  try { ok = bcrypt.compareSync(password, hash); } catch { ok = false; }
  // Hashes whose costs add up to the difference, so every check costs the same whatever the user.
  for (const salt of padSalts) bcrypt.hashSync(password, salt);
  parentPort.postMessage({ id, ok });
});
`;

export interface Verifier {
  /** Whether `password` matches `hash`; then `padSalts` are hashed too (work that only costs time). */
  verify(password: string, hash: string, padSalts: readonly string[]): Promise<boolean>;
  /** Starts what the first check needs (a thread), so the first login does not wait for it. */
  warm?(): void;
  close(): Promise<void>;
}

export class BcryptWorker implements Verifier {
  private worker: Worker | undefined;

  /** `nice`: the thread's nice value (19 = runs only when nothing else wants the CPU). */
  constructor(private readonly nice = 0) {}
  private readonly pending = new Map<number, { resolve: (ok: boolean) => void; reject: (err: Error) => void }>();
  private nextId = 0;
  private closed = false;

  verify(password: string, hash: string, padSalts: readonly string[]): Promise<boolean> {
    // Closed is closed: a check still queued at shutdown must not start a new thread that keeps the process alive.
    if (this.closed) return Promise.reject(new Error('the bcrypt verifier is closed'));
    const worker = this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, password, hash, padSalts });
    });
  }

  warm(): void {
    if (!this.closed) this.start();
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private start(): Worker {
    if (this.worker !== undefined) return this.worker;
    const bcryptjs = createRequire(import.meta.url).resolve('bcryptjs');
    const worker = new Worker(THREAD, { eval: true, workerData: { bcryptjs, nice: this.nice } });
    // Requests in flight keep the process alive; an idle verifier must not.
    worker.unref();
    worker.on('message', ({ id, ok }: { id: number; ok: boolean }) => {
      this.pending.get(id)?.resolve(ok);
      this.pending.delete(id);
    });
    const fail = (err: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`bcrypt worker exited with ${code}`)));
    this.worker = worker;
    return worker;
  }
}
