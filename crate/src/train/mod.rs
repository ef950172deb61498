//! Training: backward passes, Adam, the Noam schedule, the trainer.
