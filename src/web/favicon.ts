/**
 * `/favicon.ico` (C18): the console's icon, 16 and 32 px, embedded like the other assets so the
 * binary needs no file beside it. Drawn by docs/tools/favicon.ts, which printed this base64.
 */
export const FAVICON_ICO: Buffer = Buffer.from(
  'AAABAAIAEBAAAAEAIABoBAAAJgAAACAgAAABACAAqBAAAI4EAAAoAAAAEAAAACAAAAABACAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA2E4d' +
  'ANhOHYDYTh3v2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHe/YTh2A2E4dANhOHYDYTh3/2E4d/9hOHf/YTh3/' +
  '2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHYDYTh3v2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/Y' +
  'Th3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3v2E4d/9hOHf/YTh3/2E4d/9hOHf/ielb/88i4////////////88i4/+J6Vv/YTh3/2E4d/9hO' +
  'Hf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/sp47////////////43tX/+N7V////////////7KeO/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d' +
  '/9hOHf/ielb///////je1f/fb0f/2E4d/9hOHf/fb0f/+N7V///////ielb/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/88i4///////fb0f/' +
  '2E4d/9hOHf/YTh3/2E4d/99vR///////88i4/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d///////43tX/2E4d/9hOHf/YTh3/2E4d/9hOHf/Y' +
  'Th3/+N7V///////YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf//////+N7V/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d//je1f//////2E4d/9hO' +
  'Hf/YTh3/2E4d/9hOHf/YTh3/88i4///////fb0f/2E4d/9hOHf/fb0f/55By/+J6Vv/sp47/6ZuA/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d' +
  '/+J6Vv//////+N7V/99vR//YTh3/3WQ5////////////6ZuA/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/7KeO////////////' +
  '+N7V//je1f///////////91kOf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/ielb/88i4////////////+N7V//je1f/Y' +
  'Th3/2E4d/9hOHf/YTh3/2E4d/9hOHe/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9pZK//nkHL/2E4d/9hOHf/YTh3/2E4d/9hO' +
  'He/YTh2A2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh2A2E4dANhOHYDYTh3v2E4d' +
  '/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHe/YTh2A2E4dAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' +
  'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAoAAAAIAAAAEAAAAABACAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA2E4dANhOHQDY' +
  'Th0A2E4dQNhOHa/YTh3v2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hO' +
  'Hf/YTh3/2E4d/9hOHf/YTh3v2E4dr9hOHUDYTh0A2E4dANhOHQDYTh0A2E4dENhOHZ/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d' +
  '/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHZ/YTh0Q' +
  '2E4dANhOHQDYTh2f2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/Y' +
  'Th3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHZ/YTh0A2E4dQNhOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hO' +
  'Hf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d' +
  '/9hOHf/YTh3/2E4d/9hOHUDYTh2v2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/' +
  '2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4dr9hOHe/YTh3/2E4d/9hOHf/Y' +
  'Th3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hO' +
  'Hf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3v2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/5IVk' +
  '//C9qv/108f////////////108f/8L2q/+SFZP/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/' +
  '2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/4npW//rp4/////////////////////////////////////////////rp4//i' +
  'elb/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/+yn' +
  'jv/////////////////////////////////////////////////////////////////sp47/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d' +
  '/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/sp47////////////////////////////43tX/8L2q//C9qv/43tX/' +
  '///////////////////////////sp47/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/Y' +
  'Th3/4npW///////////////////////zyLj/3WQ5/9hOHf/YTh3/2E4d/9hOHf/dZDn/88i4///////////////////////ielb/2E4d/9hO' +
  'Hf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/66eP/////////////////55By/9hOHf/YTh3/2E4d' +
  '/9hOHf/YTh3/2E4d/9hOHf/YTh3/55By//////////////////rp4//YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/' +
  '2E4d/9hOHf/YTh3/5IVk//////////////////PIuP/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/88i4////////' +
  '/////////+SFZP/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/wvar/////////////////3WQ5/9hO' +
  'Hf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/dZDn/////////////////8L2q/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d' +
  '/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d//XTx/////////////je1f/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/' +
  '2E4d/9hOHf/43tX////////////108f/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/////////////' +
  '////8L2q/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d//C9qv/////////////////YTh3/2E4d/9hO' +
  'Hf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/////////////////wvar/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d' +
  '/9hOHf/YTh3/2E4d/9hOHf/YTh3/8L2q/////////////////9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/' +
  '2E4d//XTx/////////////je1f/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/43tX////////////1' +
  '08f/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/8L2q/////////////////91kOf/YTh3/2E4d/9hO' +
  'Hf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/+eQcv/zyLj///////C9qv/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d' +
  '/9hOHf/YTh3/2E4d/9hOHf/khWT/////////////////88i4/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d//PIuP/43tX/9dPH/+6ynP/sp47/' +
  '55By/9pZK//dZDn/3WQ5/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/66eP/////////////' +
  '////55By/9hOHf/YTh3/2E4d/9hOHf/YTh3/55By////////////////////////////2lkr/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hO' +
  'Hf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/+J6Vv//////////////////////88i4/91kOf/YTh3/2E4d/9hOHf/aWSv//fTx' +
  '//////////////////PIuP/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/' +
  '2E4d/+ynjv////////////////////////////je1f/wvar/8L2q//je1f//////////////////////55By/9hOHf/YTh3/2E4d/9hOHf/Y' +
  'Th3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/+ynjv//////////////////////////////' +
  '///////////////////////////////////aWSv/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d' +
  '/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/+J6Vv/66eP/////////////////////////////////////////////////88i4/9hOHf/YTh3/' +
  '2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/k' +
  'hWT/8L2q//XTx/////////////XTx//wvar/88i4///////nkHL/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hO' +
  'He/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/fb0f/////' +
  '/9pZK//YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3v2E4dr9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/' +
  '2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/wvar/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/Y' +
  'Th3/2E4d/9hOHa/YTh1A2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hO' +
  'Hf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4dQNhOHQDYTh2f2E4d/9hOHf/YTh3/2E4d' +
  '/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/' +
  '2E4d/9hOHf/YTh3/2E4d/9hOHZ/YTh0A2E4dANhOHRDYTh2f2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/Y' +
  'Th3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh2f2E4dENhOHQDYTh0A2E4dANhO' +
  'HQDYTh1A2E4dr9hOHe/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d/9hOHf/YTh3/2E4d' +
  '/9hOHf/YTh3/2E4d/9hOHe/YTh2v2E4dQNhOHQDYTh0A2E4dAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' +
  'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' +
  'AAAA',
  'base64',
)
