/** The resolve hook of test/helpers/esm-imports.mjs: posts `<importing file URL> <specifier>` for each import. */
let port;

export function initialize(data) {
  port = data.port;
}

export async function resolve(specifier, context, nextResolve) {
  port.postMessage(`${context.parentURL ?? '(entry)'} ${specifier}`);
  return nextResolve(specifier, context);
}
