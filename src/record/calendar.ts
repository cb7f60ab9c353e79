// Whether a date and hour written as RFC 3339 are on the calendar: Date.parse rolls February 30th over to
// March 2nd and T24:00 to the next day, times nobody wrote (the record parser and the config's instants).

/** Whether an RFC 3339 text (RFC3339 matched) names a real day and an hour 00–23: February 30th does not. */
export function onCalendar(v: string): boolean {
  const year = Number(v.slice(0, 4));
  const month = Number(v.slice(5, 7));
  const day = Number(v.slice(8, 10));
  const hour = Number(v.slice(11, 13));
  if (hour > 23 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return day <= days;
}
