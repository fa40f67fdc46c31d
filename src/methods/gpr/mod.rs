//! Ground-penetrating radar: GSSI DZT, pulseEKKO DT1/HD, MALA rd3/rd7, SEG-Y readers and the
//! processing chain (time zero, dewow, background removal, filters, gains, migration).
