// The Response every handler here answers with: the one Yoga's server adapter (@whatwg-node/server)
// itself uses on Node, not Node's global Response. The adapter writes its own class's string or
// byte body straight to the socket; a global (undici) Response it must copy header by header and
// pump through a web stream, which cost a REST request about a tenth of its CPU (BENCHMARKS.md,
// fix 10).
export { Response } from '@whatwg-node/fetch';
