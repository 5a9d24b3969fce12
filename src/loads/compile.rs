//! Compile: Burn, Write and Read at once, like `make -j` (interbench's emulate_compile).

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::burn::Burn;
use super::disk::{ReadLoad, WriteLoad};
use super::{BackgroundLoad, RunInputs, Starter, Tally};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compile {
    pub burn: Burn,
    pub write: WriteLoad,
    pub read: ReadLoad,
}

impl Compile {
    pub fn of(run: &RunInputs) -> Compile {
        Compile {
            burn: Burn::of(run),
            write: WriteLoad::of(run),
            read: ReadLoad::of(run),
        }
    }
}

impl BackgroundLoad for Compile {
    fn start(&self, s: &mut Starter) -> Result<Box<dyn Tally>> {
        Ok(Box::new(vec![
            self.burn.start(s)?,
            self.write.start(s)?,
            self.read.start(s)?,
        ]))
    }

    fn files_fd(&self) -> Option<i32> {
        self.write.files_fd()
    }
}
