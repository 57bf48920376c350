// Small helpers for asserting on asynchronous behaviour.

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads until `done` holds (background work such as payments settles within a second or so). */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last read: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}

/** The error a call is rejected with; fails when it succeeds. */
export async function rejectionOf(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to be rejected, but it succeeded');
}
