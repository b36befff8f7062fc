// Shared by the client checks: the server's address (run.sh starts one on
// the repository's random-weight tiny model and sets INFERNO_URL to its
// /v1 base), the model's name, and check, which runs one call and counts
// its failure. Each check file ends with done().
export const baseURL = process.env.INFERNO_URL ?? "http://127.0.0.1:8080/v1";
export const origin = new URL(baseURL).origin;
export const model = "tiny-q8_0";

let failures = 0;

// check runs fn, printing its result or its failure.
export async function check(what, fn) {
  try {
    console.log(`ok   ${what}: ${JSON.stringify(await fn())}`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${what}: ${e?.stack ?? e?.message ?? e}`);
  }
}

// done exits with the checks' status.
export function done() {
  process.exit(failures ? 1 : 0);
}
