// Loaded only by `prisma dev` (Prisma's local development server), which this project does not
// use: the real package requires Node >= 22, so the install would warn on the Node we support.
export async function startLocalDurableStreamsServer() {
  throw new Error('`prisma dev` is not available in this project: @prisma/streams-local (Node >= 22) is replaced by a stand-in. Use `npm start`.');
}
