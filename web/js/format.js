// Times and amounts as people read them: RFC 3339 with "5m ago" / "in 2h", never epoch numbers.

// A time from the API (Unix seconds, or an RFC 3339 string) as milliseconds; null stays null.
export function toMs(t) {
  if (t === null || t === undefined) return null;
  return typeof t === 'number' ? t * 1000 : Date.parse(t);
}

export function rfc3339(ms) {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

// "3d 4h", "5m", "12s": the two largest units.
export function duration(ms) {
  let s = Math.round(Math.abs(ms) / 1000);
  const parts = [];
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60], ['s', 1]]) {
    if (s >= size || (unit === 's' && parts.length === 0)) {
      parts.push(`${Math.floor(s / size)}${unit}`);
      s %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

// "in 5m" or "5m ago", from now.
export function relative(ms) {
  const d = ms - Date.now();
  if (Math.abs(d) < 1000) return 'now';
  return d > 0 ? `in ${duration(d)}` : `${duration(d)} ago`;
}

// "2026-11-26T05:10:49Z (5m ago)", or "—" for none.
export function when(t) {
  const ms = toMs(t);
  return ms === null || Number.isNaN(ms) ? '—' : `${rfc3339(ms)} (${relative(ms)})`;
}

// A GPU count: whole numbers plainly, fractions to the thousandth.
export function gpus(x) {
  return Number.isInteger(x) ? String(x) : x.toFixed(3).replace(/0+$/, '');
}

// An amount string as the API writes it ("8", "0.5", "512Gi", "64") as a number in the
// resource's unit (memory in MiB); null when it is not one.
export function amount(s) {
  const m = /^([0-9.]+)\s*(Ki|Mi|Gi|Ti)?$/.exec(String(s));
  if (!m) return null;
  const scale = {Ki: 1 / 1024, Mi: 1, Gi: 1024, Ti: 1024 * 1024}[m[2]] ?? 1;
  return Number(m[1]) * scale;
}

// The GPU model of a resource name ("gpu/H100-80GB" → "H100-80GB"), or null when not a GPU.
export function gpuModel(resource) {
  return resource.startsWith('gpu/') ? resource.slice(4) : null;
}
