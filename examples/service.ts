// Before an example's first request: is the service there? Without it every client fails with a
// network error and a stack trace that says nothing about what to do; this says it in one line.

export async function expectService(baseUrl: string): Promise<void> {
  try {
    await fetch(new URL('/healthz', baseUrl), { signal: AbortSignal.timeout(5_000) });
  } catch {
    console.error(
      `No marketplace service answers at ${baseUrl}. Start it with \`npm start\` in the repository ` +
        '(or set MARKETPLACE_URL to where it runs), then run this example again.',
    );
    process.exit(1);
  }
}
