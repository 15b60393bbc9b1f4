// serve.js: starts dynalite as its cli.js does (the same options), and keeps it serving when a
// client goes away in the middle of sending a request.
//
// dynalite's request handler rethrows an incoming request's error, so a client that closes its
// connection before the request body has arrived (Node reports "aborted", ECONNRESET) ends the
// whole server. The tests SIGKILL tasks on purpose, and a task killed while it writes a
// checkpoint does exactly that: every later test against dynalite then failed with "connection
// refused". The live service serves on; so does this. Any other uncaught error still ends the
// process, with its stack in dynalite.log.
//
// Run by dynalite.sh as `node serve.js --host … --port …` with NODE_PATH at the npm install.
'use strict'

process.on('uncaughtException', (err) => {
  if (err && err.code === 'ECONNRESET' && err.message === 'aborted') {
    console.error(`[${new Date().toISOString()}] a client closed its connection mid-request; serving on`)
    return
  }
  console.error(err)
  process.exit(1)
})

const argv = require('minimist')(process.argv.slice(2))
const server = require('dynalite')(argv).listen(argv.port || 4567, argv.host || undefined, () => {
  const address = server.address()
  console.log('Dynalite listening at: http://%s:%s', argv.host || 'localhost', address.port)
})
