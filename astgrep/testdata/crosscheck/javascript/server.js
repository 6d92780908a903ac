'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');
const { promisify } = require('util');

const readFile = promisify(fs.readFile);
const routes = new Map();

function route(method, pattern, handler) {
  routes.set(method + ' ' + pattern, handler);
}

async function serveStatic(req, res) {
  const file = path.join(__dirname, 'public', req.url);
  try {
    const data = await readFile(file);
    res.writeHead(200);
    res.end(data);
  } catch (err) {
    console.error('static', file, err.message);
    res.writeHead(404);
    res.end('not found');
  }
}

route('GET', '/health', (req, res) => {
  res.end(JSON.stringify({ ok: true, uptime: process.uptime() }));
});

route('POST', '/echo', async (req, res) => {
  let body = '';
  for await (const chunk of req) {
    body += chunk;
  }
  if (body.length === 0) {
    res.writeHead(400);
    return res.end('empty');
  }
  res.end(body);
});

const server = http.createServer(async (req, res) => {
  const handler = routes.get(req.method + ' ' + req.url);
  if (handler === undefined) {
    return serveStatic(req, res);
  }
  try {
    await handler(req, res);
  } catch (err) {
    console.error('handler failed', err);
    res.writeHead(500);
    res.end();
  }
});

function listen(port) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => {
      console.log('listening on', port);
      resolve(server);
    });
  });
}

module.exports = { route, listen };

if (require.main === module) {
  listen(Number(process.env.PORT || 8080)).then(() => console.log('ready'), (err) => {
    console.error(err);
    process.exit(1);
  });
}
