// The Soma extension: starts `soma-kernel lsp` (setting soma.server.command) for .cell files.
const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const [command, ...args] = vscode.workspace.getConfiguration('soma').get('server.command');
  client = new LanguageClient(
    'soma',
    'Soma language server',
    { command, args, transport: TransportKind.stdio },
    { documentSelector: [{ scheme: 'file', language: 'soma' }, { scheme: 'untitled', language: 'soma' }] }
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
