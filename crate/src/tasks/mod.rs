//! Seeded toy tasks with held-out splits and accuracy metrics.
